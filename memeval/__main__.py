import sys

from memeval.cli import main

sys.exit(main())
