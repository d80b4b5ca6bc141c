"""Executable reference of Kafka feature versioning, release by release.

    >>> from reference_impl import Cluster
    >>> c = Cluster("kafka-4.2")
    >>> c.apply({"op": "format", "release_version": "3.9-IV0"})["levels"]["kraft.version"]
    0
"""

from ._catalog import (
           DEFAULT_PROFILE,
           KRAFT,
           MV,
           UPGRADE_TYPE_NAMES,
           UPGRADE_TYPES,
           Profile,
           load_profile,
           profile_names,
)
from ._errors import ERROR_CODES, InputError
from .api import OPS, Cluster, apply

__all__ = [
           "DEFAULT_PROFILE",
           "ERROR_CODES",
           "KRAFT",
           "MV",
           "OPS",
           "UPGRADE_TYPES",
           "UPGRADE_TYPE_NAMES",
           "Cluster",
           "InputError",
           "Profile",
           "apply",
           "load_profile",
           "profile_names",
]
