"""A class session: a lesson's questions answered by the students on their phones, the answers kept in a
database (``store``), the stage and the students' view in ``kernelviz.app.ui``."""
