"""``oam-operator ui`` in a real browser (docs/ui.md#tests): Debian's Chromium driven by Playwright
against the full control plane and a real operator process. The screenshots of docs/ui/ are taken
here, and kept there only by ``make docs-screenshots`` (``OAM_UI_SCREENSHOTS`` names the folder;
otherwise they go to the test's temporary folder, so ``make test`` never rewrites tracked files).

Part of it runs **as installed**: a venv with the package and its runtime dependencies alone (``pip
install .`` without extras, made once per session), so a runtime import that only the ``dev`` extra
provides (numpy, once) fails here and not in a user's hands.

Without Chromium or Playwright the tests skip, and fail under ``OAM_REQUIRE_CLUSTER=1`` (``make
browser`` installs Chromium; Playwright is in the ``dev`` extra)."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import venv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2ekit import DOMAIN, Kube, condition, configmap_component, deployment_component
from kubernetes import client

from tools.devcluster import ClusterHandle, find_binaries
from tools.devcluster.pytest_plugin import default_wait, require_cluster, wait_until
from tools.operatorprocess import free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("OAM_TEST_CHROMIUM", "/usr/bin/chromium"))  # Debian's package
SCREENSHOTS_ENV = "OAM_UI_SCREENSHOTS"  # set by `make docs-screenshots` to docs/ui
SHOP = yaml.safe_load((ROOT / "examples" / "shop.yaml").read_text())
BUNDLES = ["shop-infra", "shop-services", "shop-apps"]


def _missing(message: str) -> None:
    if require_cluster():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is missing: pip install -e '.[dev]'")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                              args=["--no-sandbox", "--disable-gpu", "--no-proxy-server"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(60_000)
    yield opened
    context.close()


@pytest.fixture
def shoot(tmp_path: Path) -> Callable[[Any, str], Path]:
    """``shoot(page, "list.png")``: a full-page screenshot into ``$OAM_UI_SCREENSHOTS`` (docs/ui
    under ``make docs-screenshots``), else into the test's temporary folder."""
    folder = Path(os.environ[SCREENSHOTS_ENV]) if os.environ.get(SCREENSHOTS_ENV) else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str) -> Path:
        path = folder / name
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def _source_copy(into: Path) -> Path:
    """The files ``pip install .`` reads, copied: the worktree gets no build/ and no stale file
    of an earlier build can slip into the wheel."""
    source = into / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "operator", source / "operator", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, source / name)
    return source


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a venv holding the package as a user installs it: ``pip install .``
    without extras, so only the runtime dependencies (made once per session; pip's cache makes
    it about 85 s here)."""
    where = tmp_path_factory.mktemp("installed")
    venv.EnvBuilder(with_pip=True, clear=True).create(where / "venv")
    python = where / "venv" / "bin" / "python"
    started = time.monotonic()
    pip = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          str(_source_copy(where))], capture_output=True, text=True)
    if pip.returncode != 0:
        _missing(f"pip install . failed (is PyPI or pip's cache reachable?):\n{pip.stderr[-3000:]}")
    sys.stderr.write(f"\ninstalled the package with its runtime dependencies in {time.monotonic() - started:.0f} s\n")
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format", "json"], capture_output=True, text=True,
                            check=True).stdout
    names = {entry["name"].lower() for entry in json.loads(listed)}
    # The point of this venv: what only the dev extra brings is absent.
    assert not names & {"numpy", "matplotlib", "pytest", "playwright"}, sorted(names)
    return where / "venv" / "bin"


@pytest.fixture
def start_ui(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start ``oam-operator ui`` with these arguments (``bin_dir``: from that venv's ``bin``, else
    this one's); its URL once it answers."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(*args: str, bin_dir: Path | None = None) -> str:
        port = free_port()
        log = tmp_path / f"ui-{len(started)}.log"
        command = [str((bin_dir or Path(sys.executable).parent) / "oam-operator"), "ui", "--port", str(port), *args]
        env = {k: v for k, v in os.environ.items() if not k.startswith("OAM_OPERATOR_")}
        with log.open("wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
        started.append((process, log))
        url = f"http://127.0.0.1:{port}/"

        def answers() -> bool:
            if process.poll() is not None:
                pytest.fail(f"the UI exited with {process.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url + "api/state", timeout=2):
                    return True
            except OSError:
                return False

        wait_until(answers, 60, "the UI to answer")
        return url

    yield start
    for process, log in started:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        sys.stderr.write(f"\n--- ui log {log} ---\n{log.read_text()[-3000:]}\n")


def shop_spec() -> dict[str, Any]:
    return copy.deepcopy(SHOP["spec"])


def kubectl(kube: Kube, *args: str) -> str:
    command = [str(find_binaries().kubectl), "--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace, *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


RECORD_BUNDLE_STATES = """() => {
  window.snapshots = [];
  const look = () => {
    const states = [...document.querySelectorAll('[data-bundle]')].map((b) => `${b.dataset.bundle}=${b.dataset.state}`);
    const last = window.snapshots[window.snapshots.length - 1];
    if (states.length && states.join(' ') !== (last || []).join(' ')) window.snapshots.push(states);
  };
  new MutationObserver(look).observe(document.getElementById('main'), {subtree: true, childList: true});
  window.notReloaded = true;
}"""


def test_the_demo_application_in_the_list_its_waves_ready_in_order_a_kubectl_change_live_and_suspend(
        start_operator: Any, kube: Kube, start_ui: Callable[..., str], page: Any, shoot: Callable[[Any, str], Path]) -> None:
    start_operator(kube.namespace)
    url = start_ui("--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace)
    wait = default_wait(kube.cluster) * 1000
    # The Application's page is open before the Application exists: everything after is live.
    page.goto(f"{url}#/app/{kube.namespace}/shop")
    page.wait_for_selector("text=not found in namespace")
    page.evaluate(RECORD_BUNDLE_STATES)
    # A pod quota holds each wave until the test lets it go: the waves the operator runs in well
    # under a second on kwok become steps the page must show one after the other.
    quota = {"metadata": {"name": "pods"}, "spec": {"hard": {"pods": "1"}}}
    kube.core.create_namespaced_resource_quota(kube.namespace, quota)
    kube.apply_app("shop", shop_spec())
    showing = "() => window.snapshots.some((s) => s.join(' ') === {!r})".format
    page.wait_for_function(showing("shop-infra=Ready shop-services=Applying shop-apps=Pending"), timeout=wait)
    api_replicas = max(kube.apps.read_namespaced_deployment("api", kube.namespace).spec.replicas or 1, 2)
    worker_replicas = kube.apps.read_namespaced_deployment("worker", kube.namespace).spec.replicas or 1
    quota["spec"]["hard"]["pods"] = str(1 + api_replicas + worker_replicas)
    kube.core.replace_namespaced_resource_quota("pods", kube.namespace, quota)
    page.wait_for_function(showing("shop-infra=Ready shop-services=Ready shop-apps=Applying"), timeout=wait)
    kube.core.delete_namespaced_resource_quota("pods", kube.namespace)
    page.wait_for_function(showing("shop-infra=Ready shop-services=Ready shop-apps=Ready"), timeout=wait)
    ready_counts = [[state.endswith("=Ready") for state in shown] for shown in page.evaluate("window.snapshots")]
    for shown in ready_counts:  # never a wave Ready before the one it follows
        assert shown == sorted(shown, reverse=True), ready_counts
    page.wait_for_function("() => document.getElementById('app-state').textContent === 'Ready'", timeout=wait)
    assert page.locator("[data-bundle=shop-infra]").inner_text().count("Current") >= 1
    assert page.locator("text=Conditions").count() == 1
    shoot(page, "application.png")

    # A change applied with kubectl shows up without a reload: the revision goes up.
    revision = int(page.locator("#app-revision").inner_text())
    kubectl(kube, "patch", "applications.oam-operator.dev", "shop", "--type", "json", "-p",
            '[{"op": "replace", "path": "/spec/components/1/properties/image", "value": "ghcr.io/example/shop-api:2.4.0"}]')
    page.wait_for_function(f"() => Number(document.getElementById('app-revision').textContent) > {revision}",
                           timeout=wait)
    assert page.evaluate("window.notReloaded") is True

    # Only the actions that apply are enabled; the others say why.
    assert [page.get_by_role("button", name=n).is_enabled() for n in ("Reconcile", "Suspend")] == [True, True]
    assert page.get_by_role("button", name="Resume").is_disabled()
    assert page.get_by_role("button", name="Resume").get_attribute("title") == "the Application is not suspended"

    # Suspend from the UI: a confirmation, then the API server's answer, then the operator's state.
    dialogs: list[str] = []
    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name="Suspend").click()
    page.wait_for_selector("#answer:has-text('suspended')")
    assert dialogs == [f"Suspend Application {kube.namespace}/shop?"]
    answer = page.locator("#answer").inner_text()
    assert answer.startswith(f"Application {kube.namespace}/shop suspended (resourceVersion ")
    assert answer.endswith("spec.suspend true)")
    assert kube.app("shop")["spec"]["suspend"] is True
    kube.wait_state("shop", "Pending", "Suspended")
    page.wait_for_function("() => document.getElementById('app-message').textContent === "
                           "'Reconciliation is suspended'", timeout=wait)
    assert page.locator("#app-state").inner_text() == "Pending"
    assert page.locator("#app-suspended").inner_text() == "yes"
    assert page.get_by_role("button", name="Resume").is_enabled()
    assert [(page.get_by_role("button", name=n).is_disabled(), page.get_by_role("button", name=n).get_attribute("title"))
            for n in ("Reconcile", "Suspend")] == [(True, "the Application is suspended: resume it first"),
                                                   (True, "the Application is already suspended")]

    # A dismissed confirmation asks nothing of the API server.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Resume").click()
    assert kube.app("shop")["spec"]["suspend"] is True

    # The list, reached with the keyboard, shows the Application with its state and revision.
    page.get_by_role("link", name="← Applications").focus()
    page.keyboard.press("Enter")
    row = page.locator(f"tr[data-app='{kube.namespace}/shop']")
    row.wait_for()
    assert row.locator("[data-col=state]").inner_text() == "Pending (suspended)"
    page.get_by_label("Search").fill("no-such-app")
    page.wait_for_function("() => document.getElementById('count').textContent.startsWith('0 Applications')")
    page.get_by_label("Search").fill("sho")
    row.wait_for()
    page.get_by_role("link", name="shop").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-bundle=shop-apps]")

    # The diff of the live Application (no change pending but the suspend-held revision).
    page.get_by_role("button", name="Show diff").click()
    page.wait_for_function("() => !document.getElementById('diff').textContent.startsWith('computing')",
                           timeout=wait)
    assert not page.locator("#diff").inner_text().startswith("Error:"), page.locator("#diff").inner_text()


API_IMAGE = "/spec/components/1/properties/image"


def test_history_shows_both_revisions_and_a_rollback_from_the_ui_reaches_ready_with_revision_1s_spec(
        start_operator: Any, kube: Kube, start_ui: Callable[..., str], page: Any, tmp_path: Path,
        shoot: Callable[[Any, str], Path]) -> None:
    start_operator(kube.namespace)
    # A file named like the Application in the UI's working directory: the diff still reads the
    # live Application (cli/diff.py's live_only), it neither reads nor refuses the file.
    (tmp_path / "shop").write_text("kind: NotAnApplication\n")
    url = start_ui("--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace)
    wait = default_wait(kube.cluster) * 1000
    first = shop_spec()
    kube.apply_app("shop", first)
    kube.wait_state("shop", "Ready")
    kubectl(kube, "patch", "applications.oam-operator.dev", "shop", "--type", "json", "-p",
            f'[{{"op": "replace", "path": "{API_IMAGE}", "value": "ghcr.io/example/shop-api:2.4.0"}}]')
    wait_until(lambda: (kube.app("shop").get("status") or {}).get("revision") == 2, default_wait(kube.cluster),
               "revision 2")
    kube.wait_state("shop", "Ready")

    page.goto(f"{url}#/app/{kube.namespace}/shop")
    page.wait_for_selector("#history tr[data-revision='2']", timeout=wait)
    assert page.locator("#history tbody tr").count() == 2
    assert page.locator("#history tr[data-revision='2']").inner_text().startswith("2 (current)")
    assert "Ready" in page.locator("#history tr[data-revision='1']").inner_text()
    assert page.locator("#drift").inner_text().startswith("No drift")

    page.get_by_role("button", name="Show diff").click()
    page.wait_for_function("() => !document.getElementById('diff').textContent.startsWith('computing')",
                           timeout=wait)
    assert not page.locator("#diff").inner_text().startswith("Error:"), page.locator("#diff").inner_text()

    # The current revision cannot be rolled back to (the CLI refuses it): its button is disabled
    # and says why; revision 1's is enabled.
    generation = kube.app("shop")["metadata"]["generation"]
    current = page.get_by_role("button", name="Roll back to revision 2")
    assert current.is_disabled() and current.get_attribute("title") == "revision 2 is the current revision"
    assert page.get_by_role("button", name="Roll back to revision 1").is_enabled()

    # Revision 1: a confirmation, the API server's answer, then Ready with revision 1's spec.
    dialogs: list[str] = []
    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name="Roll back to revision 1").click()
    page.wait_for_selector("#answer:has-text('rolled back')")
    assert dialogs == [f"Roll back Application {kube.namespace}/shop to revision 1?"]
    assert page.locator("#answer").inner_text() == (
        f"Application {kube.namespace}/shop rolled back to revision 1 (generation {generation + 1})")
    wait_until(lambda: (kube.app("shop").get("status") or {}).get("revision") == 3, default_wait(kube.cluster),
               "revision 3")
    ready = kube.wait_state("shop", "Ready")
    # Revision 1's spec (the API server adds its defaults, such as traits: [], to both).
    assert [(c["name"], c["properties"]) for c in ready["spec"]["components"]] == [
        (c["name"], c["properties"]) for c in first["components"]]
    assert kube.apps.read_namespaced_deployment("api", kube.namespace).spec.template.spec.containers[0].image == (
        "ghcr.io/example/shop-api:2.3.1")
    page.wait_for_selector("#history tr[data-revision='3']", timeout=wait)
    restored = page.locator("#history tr[data-revision='3']").inner_text()
    assert restored.startswith("3 (current)") and "\t1\t" in restored, restored
    shoot(page, "history.png")


def _other_namespace(kube: Kube, request: pytest.FixtureRequest) -> str:
    name = f"{kube.namespace}-other"[:63]
    kube.core.create_namespace({"metadata": {"name": name}})
    request.addfinalizer(lambda: kube.core.delete_namespace(name))
    return name


def _viewer_kubeconfig(kube: Kube, tmp_path: Path) -> Path:
    """A ServiceAccount that may read Applications and Events and patch Applications in the test's
    namespace only, and a kubeconfig with its token whose context names that namespace."""
    namespace = kube.namespace
    rbac = client.RbacAuthorizationV1Api(kube.api)
    kube.core.create_namespaced_service_account(namespace, {"metadata": {"name": "viewer"}})
    rbac.create_namespaced_role(namespace, {"metadata": {"name": "viewer"}, "rules": [
        {"apiGroups": ["oam-operator.dev"], "resources": ["applications"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]}]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "viewer"}, "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": namespace}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "viewer"}})
    token = kube.core.create_namespaced_service_account_token(
        "viewer", namespace, {"spec": {"expirationSeconds": 3600}}).status.token
    cluster = yaml.safe_load(Path(kube.cluster.kubeconfig).read_text())["clusters"][0]
    path = tmp_path / "viewer.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": "viewer", "user": {"token": token}}],
        "contexts": [{"name": "viewer", "context": {"cluster": cluster["name"], "user": "viewer",
                                                     "namespace": namespace}}],
        "current-context": "viewer"}))
    path.chmod(0o600)
    return path


def _app_body(name: str, namespace: str, *depends_on: str) -> dict[str, Any]:
    policies = [{"name": "after", "type": "app-dependency",
                 "properties": {"applications": [{"name": d} for d in depends_on]}}] if depends_on else []
    return {"apiVersion": "oam-operator.dev/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"components": [{"name": "c", "type": "passthrough", "properties": {"object": {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}}}],
                "policies": policies}}


def test_a_user_limited_to_one_namespace_sees_only_it_and_the_forbidden_one_as_such_as_installed(
        crds_installed: None, kube: Kube, full_cluster: ClusterHandle, start_ui: Callable[..., str], page: Any,
        tmp_path: Path, request: pytest.FixtureRequest, installed: Path, shoot: Callable[[Any, str], Path]) -> None:
    """From the venv with the runtime dependencies alone: the graph's layout once needed numpy there."""
    other = _other_namespace(kube, request)
    for name, namespace, deps in (("web", kube.namespace, ("api",)), ("api", kube.namespace, ("db",)),
                                  ("db", kube.namespace, ()), ("a", kube.namespace, ("b",)),
                                  ("b", kube.namespace, ("a",)), ("hidden", other, ())):
        kube.custom.create_namespaced_custom_object("oam-operator.dev", "v1alpha1", namespace, "applications",
                                                    _app_body(name, namespace, *deps))
    viewer = str(_viewer_kubeconfig(kube, tmp_path))

    url = start_ui("--kubeconfig", viewer, "-A", bin_dir=installed)
    page.goto(url)
    page.wait_for_selector(f"tr[data-app='{kube.namespace}/web']")
    notice = page.locator("#banner .notice").inner_text()
    assert notice.startswith("you may not list applications in all namespaces: ")
    assert notice.endswith(f'; showing namespace "{kube.namespace}" only')
    shown = page.locator("tr[data-app]").evaluate_all("rows => rows.map((r) => r.dataset.app)")
    assert shown == [f"{kube.namespace}/{n}" for n in ("a", "api", "b", "db", "web")]

    page.get_by_role("link", name="Dependencies").click()
    page.wait_for_selector("svg.graph")
    assert page.locator("#banner").inner_text() == page.locator("#banner .notice").inner_text()  # no error
    cycle = page.locator("svg.graph a.node.cycle").evaluate_all("nodes => nodes.map((n) => n.getAttribute('aria-label'))")
    assert cycle == [f"{kube.namespace}/a, <none>, in a cycle", f"{kube.namespace}/b, <none>, in a cycle"]
    assert page.locator("svg.graph a.node").count() == 5
    shoot(page, "graph.png")

    url = start_ui("--kubeconfig", viewer, "-n", other, bin_dir=installed)
    page.goto(url)
    page.wait_for_selector("#banner .error")
    error = page.locator("#banner .error").inner_text()
    assert error.startswith(f'Error: you may not list applications in namespace "{other}": ')
    assert "forbidden" in error
    assert page.locator("tr[data-app]").count() == 0


def _closed_port_kubeconfig(tmp_path: Path) -> Path:
    """A kubeconfig whose one context, ``nowhere``, names a server on a closed local port."""
    path = tmp_path / "nowhere.kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "nowhere", "cluster": {"server": f"https://127.0.0.1:{free_port()}",
                                                     "insecure-skip-tls-verify": True}}],
        "users": [{"name": "nowhere", "user": {"token": "t"}}],
        "contexts": [{"name": "nowhere", "context": {"cluster": "nowhere", "user": "nowhere"}}],
        "current-context": "nowhere"}))
    return path


def test_an_unknown_context_and_an_unreachable_cluster_are_messages_in_a_narrow_page(
        start_ui: Callable[..., str], browser: Any, tmp_path: Path, shoot: Callable[[Any, str], Path]) -> None:
    kubeconfig = str(_closed_port_kubeconfig(tmp_path))
    context = browser.new_context(viewport={"width": 360, "height": 740})
    narrow = context.new_page()
    try:
        narrow.goto(start_ui("--kubeconfig", kubeconfig, "--context", "no-such-context"))
        narrow.wait_for_selector("#banner .error")
        assert narrow.locator("#banner .error").inner_text() == (
            'Error: context "no-such-context" not found in the kubeconfig')
        assert narrow.evaluate("document.documentElement.scrollWidth") <= 360

        narrow.goto(start_ui("--kubeconfig", kubeconfig))
        narrow.wait_for_selector("#banner .error")
        error = narrow.locator("#banner .error").inner_text()
        server = yaml.safe_load(Path(kubeconfig).read_text())["clusters"][0]["cluster"]["server"]
        assert error.startswith(f"Error: cannot reach the API server at {server}: "), error
        assert "Traceback" not in narrow.content()
        shoot(narrow, "unreachable-narrow.png")
    finally:
        context.close()


LOADING_OR_ROWS = "() => document.querySelector('tr[data-app], [data-placeholder]') !== null"


def test_the_list_says_it_is_loading_then_that_it_is_empty_and_a_servers_internal_error_is_shown_in_its_words(
        crds_installed: None, kube: Kube, start_ui: Callable[..., str], page: Any) -> None:
    url = start_ui("--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace)
    # The list's answer held back, as a one-shot screenshot catches the page: it says it is loading.
    held: list[Any] = []
    listing = re.compile(r"/api/apps\?")
    page.route(listing, lambda route: held.append(route))
    page.goto(url)
    page.wait_for_function(LOADING_OR_ROWS)
    assert page.locator("#rows").inner_text() == "Loading Applications…"
    assert page.locator("#count").inner_text() == "loading…"
    for route in held:  # let the held answers through, then no more holding
        route.continue_()
    page.unroute(listing)
    # An empty namespace: the table says so, and how to fill it.
    page.wait_for_selector("[data-placeholder=empty]")
    assert page.locator("#rows").inner_text() == (
        f'No Applications in namespace "{kube.namespace}" yet. Create one with kubectl apply -f an Application '
        "manifest (see examples/shop.yaml), then it shows here at once.")
    page.get_by_label("Search").fill("nothing")
    page.wait_for_selector("[data-placeholder=filtered]")
    assert page.locator("#rows").inner_text() == "No Application matches the search and state."

    # The server's own words for a failure (the Dependencies page once showed a TypeError of the
    # script instead of this reply, which lacks the usual `state`).
    reply = {"error": "internal error: ModuleNotFoundError: No module named 'numpy'"}
    page.route("**/api/graph", lambda route: route.fulfill(status=500, content_type="application/json",
                                                           body=json.dumps(reply)))
    page.get_by_role("link", name="Dependencies").click()
    page.wait_for_selector("#banner .error")
    assert page.locator("#banner").inner_text() == "Error: internal error: ModuleNotFoundError: No module named 'numpy'"
    assert page.locator("main").inner_text() == "Dependencies\n\nNot loaded: see the error above."


def test_the_cli_as_installed_builds_an_example_and_serves_the_ui_and_its_graph(
        installed: Path, start_ui: Callable[..., str], tmp_path: Path) -> None:
    """The command line from the venv with the runtime dependencies alone (no cluster needed)."""
    cli = str(installed / "oam-operator")
    helped = subprocess.run([cli, "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and helped.stdout.startswith("Usage: oam-operator"), helped.stderr
    built = subprocess.run([cli, "build", str(ROOT / "examples" / "shop.yaml")], capture_output=True, text=True,
                           timeout=120)
    assert built.returncode == 0, built.stderr
    kinds = {document["kind"] for document in yaml.safe_load_all(built.stdout) if document}
    assert {"Deployment", "StatefulSet", "Service"} <= kinds, kinds
    # The graph's layout, where numpy is not installed: non-empty, so the layout runs.
    layout = subprocess.run([str(installed / "python"), "-c", (
        "from oam_operator.ui.graph import dependency_graph\n"
        "app = lambda n, *d: {'metadata': {'name': n, 'namespace': 's'}, 'spec': {'policies': [{'type': "
        "'app-dependency', 'properties': {'applications': [{'name': x} for x in d]}}]}}\n"
        "print([(n['key'], n['layer']) for n in dependency_graph([app('web', 'db'), app('db')], {})['nodes']])")],
        capture_output=True, text=True, timeout=60)
    assert (layout.returncode, layout.stdout) == (0, "[('s/db', 0), ('s/web', 1)]\n"), layout.stderr
    url = start_ui("--kubeconfig", str(_closed_port_kubeconfig(tmp_path)), "--context", "nope", bin_dir=installed)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as response:
        assert '<script src="/static/app.js" defer></script>' in response.read().decode()
    with opener.open(url + "api/graph", timeout=10) as response:
        answer = json.loads(response.read())
    assert answer["graph"] == {"nodes": [], "edges": []}
    assert answer["state"]["fatal"] == 'context "nope" not found in the kubeconfig'


AGO = re.compile(r"^(just now|\d+[smhd] ago)$")


def test_drift_and_an_error_read_as_kubectl_shows_them_and_an_object_opens_to_its_manifest_events_and_diff(
        start_operator: Any, kube: Kube, start_ui: Callable[..., str], page: Any,
        shoot: Callable[[Any, str], Path]) -> None:
    start_operator(kube.namespace)
    url = start_ui("--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace)
    wait = default_wait(kube.cluster)
    namespace = kube.namespace
    kube.apply_app("shop", {"components": [deployment_component("web")], "drift": "Report"})
    kube.apply_app("broken", {"components": [{"name": "x", "type": "no-such-type", "properties": {}}]})
    kube.wait_ready("shop")
    kube.set_image("web", "evil/web:6.6.6")

    def reported() -> dict[str, Any] | None:
        app = kube.app("shop")
        status = app.get("status") or {}
        return app if status.get("drift") and status.get("state") == "Ready" else None

    shop = wait_until(reported, wait, "the drift to be reported")
    broken = kube.wait_state("broken", "Error")
    error = (condition(broken, "Ready") or {})["message"]

    # The list: what `kubectl get oapp` says, drifted and not only Ready.
    page.goto(url)
    row = page.locator(f"tr[data-app='{namespace}/shop']")
    row.wait_for()
    page.wait_for_function(f"() => document.querySelector(\"tr[data-app='{namespace}/shop'] [data-col=state]\")"
                           ".textContent === 'Ready (drifted)'", timeout=wait * 1000)
    assert row.locator("[data-col=message]").inner_text() == shop["status"]["summary"]
    if shop["status"]["summary"].endswith("…"):  # shortened like kubectl's column: the whole on hover
        assert row.locator("[data-col=message]").get_attribute("title") == (
            f"Drifted: {(condition(shop, 'Drifted') or {})['message']}")
    assert "tone-warn" in (row.locator("[data-col=state]").get_attribute("class") or "")
    page.get_by_label("State").select_option("Drifted")
    page.wait_for_function("() => document.querySelectorAll('tr[data-app]').length === 1")
    page.get_by_label("State").select_option("")
    page.wait_for_function("() => document.querySelectorAll('tr[data-app]').length === 2")
    shoot(page, "list.png")

    # One Application: drift as a warning, each condition in its type's tone, times relative.
    page.goto(f"{url}#/app/{namespace}/shop")
    page.wait_for_selector("#app-drifted")
    tones = page.locator("tr[data-condition] td:nth-child(2)").evaluate_all(
        "cells => cells.map((c) => [c.parentElement.dataset.condition, c.textContent, c.className])")
    assert tones == [["Ready", "True", "tone-ok"], ["Drifted", "True", "tone-warn"]], tones
    times = page.locator("#detail time").evaluate_all(
        "ts => ts.map((t) => [t.getAttribute('datetime'), t.title, t.textContent])")
    assert times and all(iso == title and AGO.match(text) for iso, title, text in times), times
    assert page.locator("#drift").inner_text().startswith("Drifted (DriftDetected): Deployment web (")

    # The resource tree: the drifted Deployment opens to its live manifest, its Events and its diff.
    opener = page.get_by_role("button", name="Deployment web", exact=True)  # status --tree's label
    opener.click()
    manifest = page.locator("#pane-manifest pre.manifest")
    manifest.wait_for()
    assert "image: evil/web:6.6.6" in manifest.inner_text() and "managedFields" not in manifest.inner_text()
    page.wait_for_selector("#history table")
    shoot(page, "object.png")
    page.get_by_role("tab", name=re.compile(r"^Events")).click()
    assert re.fullmatch(r"Events \(\d+\)", page.get_by_role("tab", name=re.compile(r"^Events")).inner_text())
    assert "ScalingReplicaSet" in page.locator("#pane-events").inner_text()
    page.get_by_role("tab", name="Diff").click()
    page.wait_for_selector("#pane-diff pre.diff", timeout=wait * 1000)
    diff = page.locator("#pane-diff pre.diff").inner_text().splitlines()
    assert [line.split("image: ")[1] for line in diff if "image: " in line and line[0] in "-+"] == [
        "evil/web:6.6.6", "registry.invalid/app:1"], diff
    page.keyboard.press("Escape")
    assert page.locator("#object").is_hidden()
    assert page.evaluate("document.activeElement.textContent") == "Deployment web"

    # An Application in Error: its message once on the page (not once per condition and Event),
    # Stalled True drawn as a failure.
    page.goto(f"{url}#/app/{namespace}/broken")
    page.wait_for_function("() => document.getElementById('app-state')?.textContent === 'Error'")
    page.wait_for_selector("#history table, #history p")
    assert page.locator("main").inner_text().count(error) == 1, page.locator("main").inner_text()
    stalled = page.locator("tr[data-condition=Stalled] td:nth-child(2)")
    assert (stalled.inner_text(), stalled.get_attribute("class")) == ("True", "tone-bad")
    shoot(page, "error.png")


def test_the_runs_of_lifecycle_hooks_are_a_table_on_the_applications_page(
        start_operator: Any, kube: Kube, start_ui: Callable[..., str], page: Any) -> None:
    """A PreApply hook (a ConfigMap: done once kstatus calls it Current) recorded in
    ``status.hooks`` is a row of the page's Hooks table (docs/ui.md#one-application)."""
    start_operator(kube.namespace)
    url = start_ui("--kubeconfig", kube.cluster.kubeconfig, "-n", kube.namespace)
    kube.apply_app("hooked", {"components": [configmap_component("seed", **{f"{DOMAIN}/hook": "PreApply"}),
                                             configmap_component("settings")]})
    ready = kube.wait_ready("hooked")
    assert [(h["phase"], h["name"], h["run"], h["state"]) for h in ready["status"]["hooks"]] == [
        ("PreApply", "seed", "r1", "Succeeded")]
    page.goto(f"{url}#/app/{kube.namespace}/hooked")
    row = page.locator("tr[data-hook='PreApply|ConfigMap|seed']")
    row.wait_for()
    cells = row.locator("td").all_inner_texts()
    assert cells[:5] == ["PreApply", "ConfigMap seed", "r1", "Succeeded", "BeforeNextRun"], cells
    assert page.locator("#hooks-h").inner_text() == "Hooks"
