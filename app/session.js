// ragqa's page script (app/server.py puts it in the page's head). A server restart ends every
// session: Gradio then marks the question box with a red "Error". This keeps what the user was
// typing (in this browser's localStorage, until it is sent) and says that the session ended and
// a reload continues; while the server cannot be reached it says so.
(() => {
  const KEY = "ragqa-question";
  const box = () => document.querySelector("#question textarea");
  let restored = false;
  let appId = null;

  function banner(text) {
    let note = document.getElementById("session-ended");
    if (!note) {
      note = document.createElement("div");
      note.id = "session-ended";
      note.setAttribute("role", "alert");
      note.style.cssText = "position:fixed;top:0;left:0;right:0;z-index:10000;padding:10px 16px;" +
        "background:#fff3cd;color:#5c4400;border-bottom:1px solid #e0c36c;font:15px sans-serif";
      const words = document.createElement("span");
      const reload = document.createElement("button");
      reload.textContent = "Reload";
      reload.style.cssText = "margin-left:12px;padding:2px 12px";
      reload.onclick = () => location.reload();
      note.append(words, reload);
      document.body.append(note);
    }
    note.firstChild.textContent = text;
  }

  // Remember the box as it is (typed, sent and cleared, restored) twice a second.
  setInterval(() => {
    const question = box();
    if (!question) return;
    if (!restored) {
      restored = true;
      const kept = localStorage.getItem(KEY);
      if (kept && !question.value) {
        question.value = kept;
        question.dispatchEvent(new Event("input", { bubbles: true }));
      }
      return;
    }
    localStorage.setItem(KEY, question.value);
  }, 500);

  // A question typed before logging out is not the next login's.
  document.addEventListener("click", (event) => {
    if (event.target.closest && event.target.closest("#logout")) localStorage.removeItem(KEY);
  }, true);

  // The server's app id changes with every start, and a login ends with the server.
  async function check() {
    try {
      const response = await fetch("gradio_api/app_id", { credentials: "same-origin", cache: "no-store" });
      const id = response.ok ? (await response.json()).app_id : null;
      if (appId === null && id !== null) {
        appId = id;
      } else if (id !== appId) {
        banner("This session has ended: the server was restarted. Reload the page to continue; " +
               "the question you were typing is kept.");
        return;  // nothing more to watch: only a reload helps
      }
      const note = document.getElementById("session-ended");
      if (note) note.remove();
    } catch (error) {
      banner("The server cannot be reached. What you type is kept; reload the page once it is back.");
    }
    setTimeout(check, 3000);
  }
  setTimeout(check, 1000);
})();
