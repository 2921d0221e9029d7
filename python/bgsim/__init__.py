"""bgsim's results in pandas.

    import bgsim
    study = bgsim.load("results/default")      # every result file, checked against its manifest
    study.paired("background_energy_j")          # each policy against the baseline, pair by pair
    bgsim.plot.paired(study)                     # the report's forest plot, in its colours
"""

from . import plot
from .colors import policy_colors
from .stats import interval, t_quantile
from .study import BadResults, ResultsError, Study, load, unit

__all__ = ["load", "Study", "ResultsError", "BadResults", "unit", "policy_colors", "interval", "t_quantile", "plot"]
__version__ = "0.3.0"
