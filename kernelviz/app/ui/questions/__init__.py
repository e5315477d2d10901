"""Predict, then reveal: the chapters' questions and the widget that asks them."""
