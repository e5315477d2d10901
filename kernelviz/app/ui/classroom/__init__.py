"""A class session: the teacher's stage, the students' join view and the store's connection."""
