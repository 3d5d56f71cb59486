"""ember.optim: optimizers and learning-rate schedulers (PyTorch's ``torch.optim``)."""
from . import lr_scheduler as lr_scheduler
from .adagrad import Adagrad as Adagrad
from .adam import Adam as Adam
from .adam import AdamW as AdamW
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
