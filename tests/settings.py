"""The settings tests run on: the project's own, on a development machine's defaults unless the
shell sets DEBUG.

DEBUG=1 gives the local-only secret key and static files served from their source folders (no
collectstatic before a test run); pytest-django still runs every test with DEBUG off. A program a
test starts inherits the same environment.
"""

import os

os.environ.setdefault("DEBUG", "1")

from project.settings import *  # noqa: E402, F403
