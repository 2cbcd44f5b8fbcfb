"""ragqa engine: settings, models, store, retrieval, scoring, reference matching, pipeline.

Importing it pins every library we use to offline, telemetry-free behaviour before any of them
is imported, so no code path of ours can reach a hub or an analytics endpoint.
"""

import importlib.util
import os
from pathlib import Path

_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "RAGAS_DO_NOT_TRACK": "true",  # ragas reads the string "true"; "1" is ignored
    "GRADIO_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",  # chroma
    "DO_NOT_TRACK": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
for _key, _value in _OFFLINE.items():
    os.environ[_key] = _value


def _tiktoken_cache() -> None:
    """tiktoken downloads its BPE files unless pointed at the copy llama-index-core ships."""
    spec = importlib.util.find_spec("llama_index.core")
    if spec and spec.submodule_search_locations:
        cache = Path(spec.submodule_search_locations[0]) / "_static" / "tiktoken_cache"
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache))


_tiktoken_cache()
