"""Every cache of the app: cached calls into the backend, kept results, the next notch prepared ahead, and
runs continued from an earlier one."""
