"""The model: what the runs say, as plain data (no printing, no units, no HTML)."""
