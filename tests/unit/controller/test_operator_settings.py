"""Operator settings (docs/operator.md#settings): defaults, environment, flags win, one-line errors."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from oam_operator.api import AdoptionPolicy, UpdatePolicy
from oam_operator.controller.reconcile.settings import LogFormat, LogLevel, Settings, SettingsError, env_var, flag_name

DEFAULTS = {
    "domain": "oam-operator.dev",
    "namespaces": (),
    "max_concurrent_reconciles": 10,
    "adaptive_concurrency": True,
    "apply_concurrency": 8,
    "kube_api_qps": 50.0,
    "kube_api_burst": 100,
    "default_interval": "10m",
    "default_timeout": "10m",
    "reapply_interval": "60m",
    "default_adoption_policy": AdoptionPolicy.IF_UNOWNED,
    "default_update_policy": UpdatePolicy.SSA_MERGE,
    "default_profile": "default",
    "cluster_id": "",
    "require_service_account": False,
    "default_service_account": "default",
    "use_operator_identity": False,
    "allow_cluster_scoped_objects": False,
    "cluster_scoped_adoption_policy": AdoptionPolicy.NEVER,
    "allow_cross_namespace_objects": False,
    "allow_cross_namespace_dependencies": False,
    "missing_dependency_grace": "1m",
    "dependent_events": False,
    "readiness_watch": True,
    "url_sources": True,
    "url_source_allowed_networks": (),
    "notification_allowed_networks": (),
    "helm_binary": "helm",
    "metrics_port": 8080,
    "health_port": 8081,
    "log_format": LogFormat.JSON,
    "log_level": LogLevel.INFO,
    "shard": "",
    "peering": None,
    "priority": 100,
    "dev": False,
    "admission": False,
    "admission_address": "0.0.0.0",
    "admission_port": 9443,
    "admission_cert_dir": "",
    "admission_secret": "",
    "admission_hosts": (),
    "admission_webhook_configuration": "",
    "leader_election": True,
    "leader_election_id": "oam-operator",
    "leader_election_lease_duration": "15s",
    "leader_election_renew_deadline": "10s",
    "leader_election_retry_period": "2s",
    "operator_namespace": "",
    "profile_secret_namespaces": (),
    "inventory_namespaces": (),
    "inventory_access_provider": "secretreader",
}

# One valid non-default value per setting, as text (environment) and as the parsed value.
VALUES: dict[str, tuple[str, Any]] = {
    "domain": ("example.org", "example.org"),
    "namespaces": ("a, b,a,,c", ("a", "b", "c")),
    "max_concurrent_reconciles": ("3", 3),
    "adaptive_concurrency": ("off", False),
    "apply_concurrency": ("1", 1),
    "kube_api_qps": ("12.5", 12.5),
    "kube_api_burst": ("7", 7),
    "default_interval": ("30s", "30s"),
    "default_timeout": ("1h30m", "1h30m"),
    "reapply_interval": ("0", "0"),
    "default_adoption_policy": ("Never", AdoptionPolicy.NEVER),
    "default_update_policy": ("replace", UpdatePolicy.REPLACE),
    "default_profile": ("", ""),
    "cluster_id": ("c-123", "c-123"),
    "require_service_account": ("true", True),
    "default_service_account": ("deployer", "deployer"),
    "use_operator_identity": ("on", True),
    "allow_cluster_scoped_objects": ("1", True),
    "cluster_scoped_adoption_policy": ("ifunowned", AdoptionPolicy.IF_UNOWNED),
    "allow_cross_namespace_objects": ("yes", True),
    "allow_cross_namespace_dependencies": ("on", True),
    "missing_dependency_grace": ("30s", "30s"),
    "dependent_events": ("on", True),
    "readiness_watch": ("off", False),
    "url_sources": ("false", False),
    "url_source_allowed_networks": ("127.0.0.1, 10.0.0.0/8", ("127.0.0.1/32", "10.0.0.0/8")),
    "notification_allowed_networks": ("127.0.0.1", ("127.0.0.1/32",)),
    "helm_binary": ("/opt/bin/helm", "/opt/bin/helm"),
    "metrics_port": ("0", 0),
    "health_port": ("9000", 9000),
    "log_format": ("text", LogFormat.TEXT),
    "log_level": ("DEBUG", LogLevel.DEBUG),
    "shard": ("eu-1", "eu-1"),
    "peering": ("oam", "oam"),
    "priority": ("-5", -5),
    "dev": ("TRUE", True),
    "admission": ("on", True),
    "admission_address": ("127.0.0.1", "127.0.0.1"),
    "admission_port": ("8443", 8443),
    "admission_cert_dir": ("/etc/oam-operator/webhook", "/etc/oam-operator/webhook"),
    "admission_secret": ("oam-system/oam-webhook-tls", "oam-system/oam-webhook-tls"),
    "admission_hosts": ("oam-webhook.oam-system.svc, 127.0.0.1,", ("oam-webhook.oam-system.svc", "127.0.0.1")),
    "admission_webhook_configuration": ("oam-admission", "oam-admission"),
    "leader_election": ("off", False),
    "leader_election_id": ("oam-eu", "oam-eu"),
    "leader_election_lease_duration": ("30s", "30s"),
    "leader_election_renew_deadline": ("5s", "5s"),
    "leader_election_retry_period": ("1s", "1s"),
    "operator_namespace": ("oam-system", "oam-system"),
    "profile_secret_namespaces": ("team-a,team-b", ("team-a", "team-b")),
    "inventory_namespaces": ("fleet, fleet-b", ("fleet", "fleet-b")),
    "inventory_access_provider": ("token-reader", "token-reader"),
}


def test_every_setting_of_the_spec_exists_with_its_default() -> None:
    assert Settings().model_dump() == DEFAULTS
    assert Settings.from_sources({}, {}) == Settings()
    assert set(VALUES) == set(Settings.model_fields)


def test_flag_and_environment_names() -> None:
    assert flag_name("max_concurrent_reconciles") == "--max-concurrent-reconciles"
    assert env_var("max_concurrent_reconciles") == "OAM_OPERATOR_MAX_CONCURRENT_RECONCILES"
    assert flag_name("namespaces") == "--namespace"
    assert env_var("namespaces") == "OAM_OPERATOR_NAMESPACE"
    assert env_var("kube_api_qps") == "OAM_OPERATOR_KUBE_API_QPS"


@pytest.mark.parametrize("name", sorted(VALUES))
def test_each_setting_reads_the_environment(name: str) -> None:
    text, value = VALUES[name]
    settings = Settings.from_sources({}, {env_var(name): text})
    assert getattr(settings, name) == value
    others = {k: v for k, v in settings.model_dump().items() if k != name}
    assert others == {k: v for k, v in DEFAULTS.items() if k != name}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_each_setting_reads_a_flag_given_as_text(name: str) -> None:
    text, value = VALUES[name]
    assert getattr(Settings.from_sources({name: text}, {}), name) == value


def test_flags_win_over_the_environment() -> None:
    environ = {
        "OAM_OPERATOR_MAX_CONCURRENT_RECONCILES": "3",
        "OAM_OPERATOR_NAMESPACE": "env-a,env-b",
        "OAM_OPERATOR_DEV": "true",
        "OAM_OPERATOR_DOMAIN": "env.example",
    }
    settings = Settings.from_sources(
        {"max_concurrent_reconciles": 5, "namespaces": ("flag-a",), "dev": False, "domain": None}, environ
    )
    assert settings.max_concurrent_reconciles == 5
    assert settings.namespaces == ("flag-a",)
    assert settings.dev is False
    assert settings.domain == "env.example"  # None = flag not given


def test_an_empty_repeatable_flag_means_not_given() -> None:
    settings = Settings.from_sources({"namespaces": ()}, {"OAM_OPERATOR_NAMESPACE": "a"})
    assert settings.namespaces == ("a",) and not settings.cluster_wide
    assert Settings().cluster_wide


def test_unrelated_environment_is_ignored() -> None:
    assert Settings.from_sources({}, {"OAM_OPERATOR_UNKNOWN": "x", "PATH": "/bin"}) == Settings()


def test_unknown_flag_is_a_programming_error() -> None:
    with pytest.raises(SettingsError, match="unknown setting no_such"):
        Settings.from_sources({"no_such": 1}, {})


def test_derived_values() -> None:
    settings = Settings.from_sources(
        {"default_interval": "30s", "default_timeout": "1h30m", "reapply_interval": "90s"}, {}
    )
    assert settings.default_interval_duration == timedelta(seconds=30)
    assert settings.default_timeout_duration == timedelta(hours=1, minutes=30)
    assert settings.reapply_interval_duration == timedelta(seconds=90)
    assert Settings().default_interval_duration == timedelta(minutes=10)
    assert Settings().reapply_interval_duration == timedelta(minutes=60)
    assert Settings().peering_priority == 100
    assert Settings.from_sources({"dev": True, "priority": 5}, {}).peering_priority == 666
    assert Settings.from_sources({"priority": 5}, {}).peering_priority == 5


def test_the_client_side_limit_is_explicit_only_when_given() -> None:
    # Not given: the bucket applies until the server shows API Priority and Fairness.
    assert not Settings().kube_api_qps_explicit
    assert not Settings.from_sources({"kube_api_burst": "7"}, {}).kube_api_qps_explicit
    # Given (flag or environment, the default value included): the bucket always applies.
    assert Settings.from_sources({"kube_api_qps": "50"}, {}).kube_api_qps_explicit
    assert Settings.from_sources({}, {"OAM_OPERATOR_KUBE_API_QPS": "0"}).kube_api_qps_explicit


def test_shard_label_and_peering_name() -> None:
    assert Settings().shard_label == "oam-operator.dev/shard"
    assert Settings(domain="example.org").shard_label == "example.org/shard"
    assert Settings().peering_name is None
    assert Settings(peering="oam").peering_name == "oam"
    assert Settings(peering="oam", shard="eu-1").peering_name == "oam-eu-1"
    assert Settings(shard="eu-1").peering_name is None


def test_settings_are_immutable() -> None:
    settings = Settings()
    with pytest.raises(ValueError, match="frozen"):
        settings.domain = "x"


INTEGER = "must be an integer"
INVALID = [
    (
        "domain",
        "Example.org",
        "must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.'; at most 253 characters)",
    ),
    ("domain", "", "must be a DNS-1123 subdomain"),
    ("domain", "a" * 254, "must be a DNS-1123 subdomain"),
    (
        "namespaces",
        "ok,Not_OK",
        "namespace \"Not_OK\" must be a DNS-1123 label (lower-case letters, digits and '-'; at most 63 characters)",
    ),
    ("max_concurrent_reconciles", "ten", INTEGER),
    ("max_concurrent_reconciles", "0", "must be at least 1"),
    ("max_concurrent_reconciles", "1.5", INTEGER),
    ("apply_concurrency", "-1", "must be at least 1"),
    ("kube_api_qps", "fast", "must be a number"),
    ("kube_api_qps", "-1", "must be a number of at least 0"),
    ("kube_api_qps", "nan", "must be a number of at least 0"),
    ("kube_api_burst", "0", "must be at least 1"),
    ("default_interval", "10", "must be a duration such as 30s, 10m or 1h30m"),
    ("default_interval", "10s", "must be at least 30s"),
    ("default_interval", "", "must be a duration such as 30s, 10m or 1h30m"),
    ("default_timeout", "5s", "must be at least 10s"),
    ("default_timeout", "1d", "must be a duration such as 30s, 10m or 1h30m"),
    ("reapply_interval", "-1m", "must be at least 0s"),
    ("default_adoption_policy", "Sometimes", 'unknown adoption policy "Sometimes" (valid: Never, IfUnowned, Always)'),
    ("default_update_policy", "Merge", 'unknown update policy "Merge" (valid: Recreate, Replace, SsaMerge, SsaOverride)'),
    ("default_profile", "Default", "must be a DNS-1123 subdomain"),
    ("cluster_id", "a/b", "must not contain '/' or whitespace"),
    ("require_service_account", "maybe", "must be true or false"),
    ("default_service_account", "Bad", "must be a DNS-1123 subdomain"),
    ("allow_cluster_scoped_objects", "2", "must be true or false"),
    ("allow_cross_namespace_objects", "", "must be true or false"),
    ("dependent_events", "nope", "must be true or false"),
    ("url_sources", "sometimes", "must be true or false"),
    ("url_source_allowed_networks", "10.0.0.0/8;intranet",
     '"10.0.0.0/8;intranet" is not an IP network such as 10.0.0.0/8 or 127.0.0.1'),
    ("helm_binary", " ", "must name a program (a path or a name on PATH)"),
    ("metrics_port", "65536", "must be between 0 and 65535"),
    ("metrics_port", "http", INTEGER),
    ("health_port", "0", "must be between 1 and 65535"),
    ("log_format", "xml", 'unknown log format "xml" (valid: json, text)'),
    ("log_level", "trace", 'unknown log level "trace" (valid: debug, info, warning, error)'),
    ("shard", "EU_1", "must be a DNS-1123 label (lower-case letters, digits and '-'; at most 63 characters)"),
    ("shard", "a" * 64, "must be a DNS-1123 label"),
    ("peering", "My Peering", "must be a DNS-1123 subdomain"),
    ("priority", "high", INTEGER),
    ("dev", "sometimes", "must be true or false"),
    ("admission", "maybe", "must be true or false"),
    ("admission_address", "localhost", "must be an IP address to listen on (0.0.0.0: every interface)"),
    ("admission_port", "0", "must be between 1 and 65535"),
    ("admission_secret", "oam-webhook-tls", "must be NAMESPACE/NAME of a Secret"),
    ("admission_secret", "Oam/x", "must be NAMESPACE/NAME of a Secret"),
    ("admission_hosts", "svc,Bad_Host", '"Bad_Host" is neither a DNS name nor an IP address'),
    ("admission_webhook_configuration", "Bad", "must be a DNS-1123 subdomain"),
    ("leader_election", "maybe", "must be true or false"),
    ("leader_election_id", "Oam", "must be a DNS-1123 subdomain"),
    ("leader_election_lease_duration", "15", "must be a duration such as 30s, 10m or 1h30m"),
    ("leader_election_renew_deadline", "-1s", "must be at least 0s"),
    ("leader_election_retry_period", "soon", "must be a duration such as 30s, 10m or 1h30m"),
    ("operator_namespace", "oam.system", "must be a DNS-1123 label"),
    ("profile_secret_namespaces", "team_a", 'namespace "team_a" must be a DNS-1123 label'),
    ("inventory_namespaces", "Fleet", 'namespace "Fleet" must be a DNS-1123 label'),
    ("inventory_access_provider", "Secret_Reader", "must be a DNS-1123 subdomain"),
]


def test_a_self_signed_webhook_needs_its_secret_and_host_names() -> None:
    assert Settings.from_sources({"admission": "true", "admission_cert_dir": "/certs"}, {}).combination_error() is None
    lacking = Settings.from_sources({"admission": "true", "admission_hosts": "127.0.0.1"}, {}).combination_error()
    assert lacking is not None and lacking.setting == "admission_secret"
    assert str(lacking) == ("--admission without --admission-cert-dir needs --admission-secret (the self-signed "
                            "certificate's Secret and host names)")
    complete = Settings.from_sources({"admission": "true", "admission_hosts": "127.0.0.1",
                                      "admission_secret": "ns/tls"}, {})
    assert complete.combination_error() is None
    assert Settings().combination_error() is None


@pytest.mark.parametrize(("name", "text", "reason"), INVALID)
def test_invalid_environment_values_name_the_setting(name: str, text: str, reason: str) -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_sources({}, {env_var(name): text})
    message = str(raised.value)
    assert message.startswith(f'invalid value for {flag_name(name)} ({env_var(name)}): "{text}": ')
    assert reason in message
    assert "\n" not in message
    assert raised.value.setting == name


@pytest.mark.parametrize(("name", "text", "reason"), INVALID)
def test_invalid_flag_values_name_the_flag(name: str, text: str, reason: str) -> None:
    flag: Any = tuple(text.split(",")) if name == "namespaces" else text
    with pytest.raises(SettingsError) as raised:
        Settings.from_sources({name: flag}, {})
    message = str(raised.value)
    assert message.startswith(f'invalid value for {flag_name(name)}: "{text}": ')
    assert reason in message


def test_typed_flag_values_are_checked_too() -> None:
    with pytest.raises(SettingsError, match=r'^invalid value for --apply-concurrency: "0": must be at least 1$'):
        Settings.from_sources({"apply_concurrency": 0}, {})
    with pytest.raises(SettingsError, match=r'^invalid value for --metrics-port: "True": must be an integer$'):
        Settings.from_sources({"metrics_port": True}, {})
    assert Settings.from_sources({"kube_api_qps": 0}, {}).kube_api_qps == 0.0
    assert Settings.from_sources({"require_service_account": True}, {}).require_service_account is True


def test_the_first_invalid_setting_is_reported() -> None:
    with pytest.raises(SettingsError) as raised:
        Settings.from_sources({}, {"OAM_OPERATOR_LOG_LEVEL": "x", "OAM_OPERATOR_KUBE_API_BURST": "x"})
    assert raised.value.setting == "kube_api_burst"


def test_direct_construction_validates_as_well() -> None:
    with pytest.raises(ValueError, match="must be at least 30s"):
        Settings(default_interval="5s")


@pytest.mark.parametrize(("given", "setting", "message"), [
    ({"leader_election_renew_deadline": "15s"}, "leader_election_renew_deadline",
     "--leader-election-renew-deadline (15s) must be less than --leader-election-lease-duration (15s): the leader "
     "stops reconciling at the renew deadline, and another instance may take the Lease over only after the lease "
     "duration"),
    ({"leader_election_lease_duration": "8s"}, "leader_election_renew_deadline",
     "--leader-election-renew-deadline (10s) must be less than --leader-election-lease-duration (8s): "),
    ({"leader_election_retry_period": "10s"}, "leader_election_retry_period",
     "--leader-election-retry-period (10s) must be less than --leader-election-renew-deadline (10s): the leader "
     "renews every retry period and must be able to retry before the renew deadline"),
    ({"leader_election_lease_duration": "500ms", "leader_election_renew_deadline": "200ms",
      "leader_election_retry_period": "100ms"}, "leader_election_lease_duration",
     "--leader-election-lease-duration (500ms) must be at least 1s (a Lease counts whole seconds)"),
])
def test_lease_settings_that_cannot_work_are_refused_at_start_with_the_rule(
        given: dict[str, str], setting: str, message: str) -> None:
    error = Settings.from_sources(given, {}).combination_error()
    assert error is not None and error.setting == setting and str(error).startswith(message)
    assert Settings.from_sources({**given, "leader_election": "off"}, {}).combination_error() is None


def test_the_lease_lives_in_the_operators_namespace(tmp_path: Any) -> None:
    missing = tmp_path / "no-such-file"
    settings = Settings()
    assert settings.lease_namespace({"POD_NAMESPACE": "oam-system"}, missing) == "oam-system"
    assert Settings(operator_namespace="ops").lease_namespace({"POD_NAMESPACE": "oam-system"}, missing) == "ops"
    mounted = tmp_path / "namespace"
    mounted.write_text("from-token\n")
    assert settings.lease_namespace({}, mounted) == "from-token"
    assert settings.lease_namespace({}, missing) == ""
    error = settings.combination_error({}, missing)
    assert error is not None and error.setting == "operator_namespace"
    assert str(error) == ("--leader-election needs the operator's namespace for its Lease: set POD_NAMESPACE (the "
                          "chart does) or --operator-namespace (OAM_OPERATOR_OPERATOR_NAMESPACE), or turn it off "
                          "with --no-leader-election")
    assert Settings(leader_election=False).combination_error({}, missing) is None
    assert settings.combination_error({"POD_NAMESPACE": "oam-system"}, missing) is None


def test_a_dev_instance_takes_no_part_in_the_election() -> None:
    assert Settings().elects and not Settings(dev=True).elects and not Settings(leader_election=False).elects
    assert Settings(dev=True).combination_error({}, Path("/nonexistent")) is None  # no Lease: no namespace needed


def test_one_lease_per_shard() -> None:
    assert Settings().lease_name == "oam-operator"
    assert Settings(shard="eu-1").lease_name == "oam-operator-shard-eu-1"
    assert Settings(leader_election_id="oam-b", shard="x").lease_name == "oam-b-shard-x"
    assert Settings().lease_timings == (15.0, 10.0, 2.0)


def test_an_enum_setting_suggests_the_close_value() -> None:
    """Issue 44: the one wording of a value outside a set, with the suggestion the CLI makes."""
    with pytest.raises(SettingsError) as refused:
        Settings.from_sources({"log_format": "jsn"}, {})
    assert str(refused.value) == (
        'invalid value for --log-format: "jsn": unknown log format "jsn" (valid: json, text); did you mean "json"?')
    with pytest.raises(SettingsError) as refused:
        Settings.from_sources({}, {"OAM_OPERATOR_DEFAULT_UPDATE_POLICY": "SsaMerg"})
    assert str(refused.value) == (
        'invalid value for --default-update-policy (OAM_OPERATOR_DEFAULT_UPDATE_POLICY): "SsaMerg": unknown update '
        'policy "SsaMerg" (valid: Recreate, Replace, SsaMerge, SsaOverride); did you mean "SsaMerge"?')
