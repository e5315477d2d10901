"""Data: the built-in data sets, the blog post's generator, CSV files, and chapter 5's task families."""
