"""LoadGen test settings: a typed mirror built from a Round, converted to ``mlperf_loadgen`` once, one module a job.

The official ``mlperf.conf`` values are compiled into the installed LoadGen wheel; a run applies them with
``TestSettings.FromConfig(user.conf, <conf model>, <LoadGen scenario>)`` (Interactive is Server traffic with the
``<model>-interactive`` keys).

- :mod:`~loadgen_sut.settings.modes`: run modes and LoadGen test modes;
- :mod:`~loadgen_sut.settings.user_conf`: the user.conf lines LoadGen would mishandle as RUN-CONF-* findings (the
  parser and its numbers as LoadGen reads them: :mod:`checker.parsers.loadgen_conf`, shared with the checker);
- :mod:`~loadgen_sut.settings.plan`: the ``TestSettings`` mirror, the official settings of a round, the plan and
  the judgement of overrides;
- :mod:`~loadgen_sut.settings.preflight`: checks before a run (LoadGen release, overrides of a mode);
- :mod:`~loadgen_sut.settings.binding`: what the installed binding offers;
- :mod:`~loadgen_sut.settings.boundary`: the conversion to and from ``mlperf_loadgen.TestSettings`` (child only).

The names below are re-exported so ``from loadgen_sut.settings import X`` names each concept's home module too.
"""

from __future__ import annotations

from checker.parsers.loadgen_conf import (
    AUDIT_KEYS as AUDIT_KEYS,
)
from checker.parsers.loadgen_conf import (
    FREE_KEYS as FREE_KEYS,
)
from checker.parsers.loadgen_conf import (
    KNOWN_KEYS as KNOWN_KEYS,
)
from checker.parsers.loadgen_conf import (
    SEED_KEYS as SEED_KEYS,
)
from checker.parsers.loadgen_conf import (
    ConfEntry as ConfEntry,
)
from checker.parsers.loadgen_conf import (
    ConfNumber as ConfNumber,
)
from checker.parsers.loadgen_conf import (
    KeyType as KeyType,
)
from checker.parsers.loadgen_conf import (
    UserConf as UserConf,
)
from checker.parsers.loadgen_conf import (
    c_strtod as c_strtod,
)
from checker.parsers.loadgen_conf import (
    c_strtoull as c_strtoull,
)
from checker.parsers.loadgen_conf import (
    key_type as key_type,
)
from checker.parsers.loadgen_conf import (
    load_user_conf as load_user_conf,
)
from checker.parsers.loadgen_conf import (
    loadgen_accepts_number as loadgen_accepts_number,
)
from checker.parsers.loadgen_conf import (
    loadgen_value as loadgen_value,
)
from checker.parsers.loadgen_conf import (
    parse_user_conf_text as parse_user_conf_text,
)
from loadgen_sut.settings.binding import (
    OPTIONAL_LOADGEN_SETTINGS as OPTIONAL_LOADGEN_SETTINGS,
)
from loadgen_sut.settings.binding import (
    OptionalSetting as OptionalSetting,
)
from loadgen_sut.settings.binding import (
    read_back_from_log as read_back_from_log,
)
from loadgen_sut.settings.binding import (
    require_loadgen_settings as require_loadgen_settings,
)
from loadgen_sut.settings.binding import (
    unavailable_loadgen_settings as unavailable_loadgen_settings,
)
from loadgen_sut.settings.binding import (
    unavailable_text as unavailable_text,
)
from loadgen_sut.settings.boundary import (
    compare_with_loadgen as compare_with_loadgen,
)
from loadgen_sut.settings.boundary import (
    describe_overrides as describe_overrides,
)
from loadgen_sut.settings.boundary import (
    from_loadgen as from_loadgen,
)
from loadgen_sut.settings.boundary import (
    rounds_with_seeds as rounds_with_seeds,
)
from loadgen_sut.settings.boundary import (
    to_loadgen as to_loadgen,
)
from loadgen_sut.settings.modes import (
    LOADGEN_DISTRIBUTION as LOADGEN_DISTRIBUTION,
)
from loadgen_sut.settings.modes import (
    RunMode as RunMode,
)
from loadgen_sut.settings.modes import (
    TestMode as TestMode,
)
from loadgen_sut.settings.plan import (
    Override as Override,
)
from loadgen_sut.settings.plan import (
    PlannedSettings as PlannedSettings,
)
from loadgen_sut.settings.plan import (
    SettingsError as SettingsError,
)
from loadgen_sut.settings.plan import (
    TestSettingsModel as TestSettingsModel,
)
from loadgen_sut.settings.plan import (
    conf_applied_fields as conf_applied_fields,
)
from loadgen_sut.settings.plan import (
    conf_model_key as conf_model_key,
)
from loadgen_sut.settings.plan import (
    conf_number_findings as conf_number_findings,
)
from loadgen_sut.settings.plan import (
    official_settings as official_settings,
)
from loadgen_sut.settings.plan import (
    plan_settings as plan_settings,
)
from loadgen_sut.settings.preflight import (
    gates_text as gates_text,
)
from loadgen_sut.settings.preflight import (
    installed_loadgen_version as installed_loadgen_version,
)
from loadgen_sut.settings.preflight import (
    loadgen_version_findings as loadgen_version_findings,
)
from loadgen_sut.settings.preflight import (
    override_findings as override_findings,
)
