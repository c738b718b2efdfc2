"""The views: the model shown as text, CSV/JSON, the HTML page and charts."""
