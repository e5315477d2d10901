"""The dashboard: what the pages compute (``views``), draw (``figures``, Plotly) and show (``ui``,
Streamlit), and the server's warm-up. The only layer that imports plotly or streamlit."""
