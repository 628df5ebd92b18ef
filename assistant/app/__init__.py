"""The web app's handlers, one module per tab plus the API tools: plain functions that take the front object
(assistant/guide.py `Guide`) and plain values and return plain values (HTML strings, lists, dicts), so each
can be tested without building the app. `ui.py` wires Gradio components to them and nothing else."""
