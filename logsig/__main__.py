"""``python -m logsig`` runs the command line."""

import sys

from logsig.cli import main

sys.exit(main())
