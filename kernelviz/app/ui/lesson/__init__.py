"""The lesson player: lesson files, the presenter's stage and its scenes, and copy-as-scene."""
