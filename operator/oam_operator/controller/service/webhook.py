"""Serving the admission webhook: kopf's HTTPS server with our certificate (docs/admission.md).

The chart, not kopf, owns the ValidatingWebhookConfiguration (``settings.admission.managed`` is
left unset): kopf only serves ``/validate-applications``. The certificate files come from
``--admission-cert-dir`` (cert-manager's Secret, mounted) or from ``CertificateKeeper``
(self-signed, in ``--admission-secret``); kopf's server re-reads changed files by itself, and
the keeper's loop re-checks the Secret every ``CHECK_INTERVAL`` seconds, so a rotation by
another instance (or by cert-manager) reaches every instance without a restart.

kopf's server reads a request of at most 1 MiB (aiohttp's default), but an AdmissionReview
carries the whole Application, and an UPDATE's the old one too: an Application of about 1 MiB
(an UPDATE of half that) would be answered ``413``, and the API server would refuse the user's
request with ``failed calling webhook …: the server responded with the status code 413`` instead
of the webhook's words (docs/admission.md#which-requests). ``LargeReviewServer`` reads up to
``MAX_REVIEW_BYTES``: twice the API server's own body limit (the new and the old object) and
1 MiB for the rest of the review.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from pathlib import Path
from typing import Any

import aiohttp.web
import kopf

from oam_operator.common.apisize import API_BODY_LIMIT
from oam_operator.controller.reconcile.settings import Settings

from .admission import Validator
from .runtime import Runtime
from .webhookcerts import CERT_FILE, CHECK_INTERVAL, KEY_FILE, RETRY_INTERVAL, CertificateKeeper

log = logging.getLogger("oam_operator.controller")

MAX_REVIEW_BYTES = 2 * API_BODY_LIMIT + 1024 * 1024


class LargeReviewServer(kopf.WebhookServer):
    """kopf's HTTPS webhook server, reading AdmissionReviews of up to ``MAX_REVIEW_BYTES`` (module docstring)."""

    @staticmethod
    async def _serve(fn: Any, request: aiohttp.web.Request) -> aiohttp.web.Response:
        response: aiohttp.web.Response = await kopf.WebhookServer._serve(
            fn, request.clone(client_max_size=MAX_REVIEW_BYTES))
        return response


class Webhook:
    """The admission webhook of one runtime: its validator (no network: the runtime's transform
    without URL sources, its profiles and identity rules), and kopf's server with its certificate,
    configured by ``start`` from the startup handler."""

    def __init__(self, runtime: Runtime, settings: Settings) -> None:
        self.settings = settings
        self.client = runtime.client
        self.validator = Validator(settings=settings, transform=runtime.transform.without_network(),
                                   profiles=runtime.profile, tenancy=runtime.env.clients,
                                   cluster_id=lambda: runtime.cluster_id)
        self._keeping: asyncio.Task[None] | None = None  # the certificate keeper's loop, when self-signed

    async def start(self, kopf_settings: kopf.OperatorSettings) -> None:
        """Configure kopf's server; with a self-signed certificate, issue it first and keep it current."""
        settings = self.settings
        keeper: CertificateKeeper | None = None
        if settings.admission_cert_dir:
            directory = Path(settings.admission_cert_dir)
        else:
            directory = Path(tempfile.mkdtemp(prefix="oam-operator-webhook-"))
            keeper = CertificateKeeper(self.client, settings.admission_secret, settings.admission_hosts, directory,
                                       settings.admission_webhook_configuration)
            await asyncio.get_running_loop().run_in_executor(None, keeper.sync)
        kopf_settings.admission.server = LargeReviewServer(
            addr=settings.admission_address, port=settings.admission_port,
            certfile=str(directory / CERT_FILE), pkeyfile=str(directory / KEY_FILE),
        )
        log.info("admission webhook configured", extra={"fields": {
            "address": settings.admission_address, "port": settings.admission_port,
            "certificates": str(directory) if keeper is None else settings.admission_secret}})
        if keeper is not None:
            self._keeping = asyncio.create_task(_keep(keeper), name="oam-operator webhook certificate")

    async def stop(self) -> None:
        if self._keeping is None:
            return
        self._keeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._keeping


async def _keep(keeper: CertificateKeeper) -> None:
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(CHECK_INTERVAL if keeper.configured else RETRY_INTERVAL)
        try:
            await loop.run_in_executor(None, keeper.sync)
        except Exception:  # the next round retries; the current certificate keeps serving
            keeper.configured = False
            log.exception("webhook certificate check failed")
