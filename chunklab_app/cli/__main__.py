"""`python -m chunklab_app.cli`: the command line."""

import sys

from chunklab_app.cli.main import main

sys.exit(main())
