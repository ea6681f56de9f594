import sys

from .main import run_sim

sys.exit(run_sim(sys.argv[1:]))
