"""What people touch: the ragqa CLI and the Gradio UI."""
