"""ember.optim: optimizers and learning-rate schedulers (PyTorch's ``torch.optim``)."""
from . import lr_scheduler as lr_scheduler
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam
from .adamw import AdamW as AdamW
from .optimizer import Optimizer as Optimizer
from .rmsprop import RMSprop as RMSprop
from .sgd import SGD as SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
from .adadelta import Adadelta as Adadelta
from .adamax import Adamax as Adamax
from .lbfgs import LBFGS as LBFGS
from .nadam import NAdam as NAdam
from .radam import RAdam as RAdam

__all__ += ["Adadelta", "Adamax", "LBFGS", "NAdam", "RAdam"]
from ._adafactor import Adafactor as Adafactor
from ._muon import Muon as Muon
from .asgd import ASGD as ASGD
from .rprop import Rprop as Rprop

__all__ += ["ASGD", "Adafactor", "Muon", "Rprop"]
from . import swa_utils as swa_utils
from ._swap import swap_in_optimizer_params_and_state as swap_in_optimizer_params_and_state

__all__ += ["swa_utils", "swap_in_optimizer_params_and_state"]
