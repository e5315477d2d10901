"""Widgets and words on the page: URL-bound controls, the data sidebar, click-to-explain, replays, text and
charts, and what makes them usable by keyboard and touch."""
