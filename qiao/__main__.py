"""`python -m qiao`: the same as the `qiao` command."""

import sys

from qiao.cli import main

sys.exit(main())
