{{/*
Named templates of the oam-operator chart (docs/chart.md#the-helm-chart).
*/}}

{{- define "oam-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's objects: fullnameOverride, else the release name (plus the
chart name when the release name does not already contain it). */}}
{{- define "oam-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "oam-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "oam-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "oam-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "oam-operator.labels" -}}
helm.sh/chart: {{ include "oam-operator.chart" . }}
{{ include "oam-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: oam-operator
{{- end }}

{{- define "oam-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "oam-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "oam-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{- define "oam-operator.peeringName" -}}
{{- default (include "oam-operator.fullname" .) .Values.peering.name }}
{{- end }}

{{/* The peering objects' names: the main one, then <name>-<shard> per shard (what the operator
joins with --peering=<name> --shard=<shard>), one per line. */}}
{{- define "oam-operator.peeringNames" -}}
{{- $name := include "oam-operator.peeringName" . }}
{{- $name }}
{{- range .Values.sharding.shards }}
{{ printf "%s-%s" $name . }}
{{- end }}
{{- end }}

{{/* The Lease of each Deployment, one name a line: <fullname>, then <fullname>-shard-<shard> per shard
(what the operator derives from --leader-election-id and --shard). */}}
{{- define "oam-operator.leaseNames" -}}
{{- $name := include "oam-operator.fullname" . }}
{{- $name }}
{{- range .Values.sharding.shards }}
{{ printf "%s-shard-%s" $name . }}
{{- end }}
{{- end }}

{{/* "true" when the operator's rights are confined to its watched namespaces (docs/chart.md#rbac). */}}
{{- define "oam-operator.namespaced" -}}
{{- if and .Values.rbac.namespaced .Values.operator.watchNamespaces }}true{{ end }}
{{- end }}

{{/* "true" in least-privilege mode: --require-service-account is forced. */}}
{{- define "oam-operator.leastPrivilege" -}}
{{- if eq .Values.rbac.mode "leastPrivilege" }}true{{ end }}
{{- end }}

{{/* "true" when the operator watches the objects it owns (--readiness-watch): operator.readinessWatch,
unless cache.enabled=false (docs/chart.md#watches-of-owned-objects). */}}
{{- define "oam-operator.watchOwned" -}}
{{- if and .Values.cache.enabled .Values.operator.readinessWatch }}true{{ end }}
{{- end }}

{{/* Combinations the schema cannot express; rendered (and so checked) by deployment.yaml. */}}
{{- define "oam-operator.validate" -}}
{{- if and .Values.rbac.namespaced (not .Values.operator.watchNamespaces) }}
{{- fail "rbac.namespaced=true needs operator.watchNamespaces (the namespaces whose Roles the operator gets)" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not (and .Values.metrics.enabled .Values.metrics.service.enabled)) }}
{{- fail "metrics.serviceMonitor.enabled=true needs metrics.enabled=true and metrics.service.enabled=true" }}
{{- end }}
{{- if and .Values.admission.url .Values.admission.certManager.enabled }}
{{- fail "admission.url and admission.certManager.enabled exclude each other (cert-manager issues the Service's certificate)" }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.health.port) }}
{{- fail "metrics.port and health.port must differ" }}
{{- end }}
{{- if and (not .Values.leaderElection.enabled) (gt (int .Values.replicas) 1) }}
{{- fail "replicas > 1 needs leaderElection.enabled=true: without leader election every instance reconciles the same Applications" }}
{{- end }}
{{- if and .Values.tracing.enabled (not .Values.tracing.endpoint) }}
{{- fail "tracing.enabled=true needs tracing.endpoint (the collector's OTLP/HTTP base URL)" }}
{{- end }}
{{- if and .Values.peering.enabled (gt (int .Values.replicas) 1) }}
{{- fail "peering.enabled=true with replicas > 1: kopf peering pauses every instance of equal priority; leader election (leaderElection.enabled) chooses the instance that reconciles" }}
{{- end }}
{{- end }}

{{/* A boolean setting as --flag / --no-flag. */}}
{{- define "oam-operator.boolFlag" -}}
{{- if .value }}--{{ .flag }}{{ else }}--no-{{ .flag }}{{ end }}
{{- end }}

{{/* The container's arguments: `run` plus one flag per setting (docs/operator.md#settings), as a YAML list. */}}
{{- define "oam-operator.args" -}}
{{- $o := .Values.operator -}}
- run
- --domain={{ $o.domain }}
{{- range $o.watchNamespaces }}
- --namespace={{ . }}
{{- end }}
- --max-concurrent-reconciles={{ int $o.maxConcurrentReconciles }}
- {{ include "oam-operator.boolFlag" (dict "flag" "adaptive-concurrency" "value" $o.adaptiveConcurrency) }}
- --apply-concurrency={{ int $o.applyConcurrency }}
{{- if not (kindIs "invalid" $o.kubeApiQps) }}
- --kube-api-qps={{ $o.kubeApiQps }}
{{- end }}
- --kube-api-burst={{ int $o.kubeApiBurst }}
- --default-interval={{ $o.defaultInterval }}
- --default-timeout={{ $o.defaultTimeout }}
- --reapply-interval={{ $o.reapplyInterval }}
- --default-update-policy={{ $o.defaultUpdatePolicy }}
- --default-adoption-policy={{ $o.defaultAdoptionPolicy }}
- --default-profile={{ $o.defaultProfile }}
{{- if $o.clusterId }}
- --cluster-id={{ $o.clusterId }}
{{- end }}
- {{ include "oam-operator.boolFlag" (dict "flag" "require-service-account" "value" (or $o.requireServiceAccount (include "oam-operator.leastPrivilege" .))) }}
- --default-service-account={{ $o.defaultServiceAccount }}
{{- if $o.useOperatorIdentity }}
- --use-operator-identity
{{- end }}
- {{ include "oam-operator.boolFlag" (dict "flag" "allow-cluster-scoped-objects" "value" $o.allowClusterScopedObjects) }}
- --cluster-scoped-adoption-policy={{ $o.clusterScopedAdoptionPolicy | default "Never" }}
- {{ include "oam-operator.boolFlag" (dict "flag" "allow-cross-namespace-objects" "value" $o.allowCrossNamespaceObjects) }}
- {{ include "oam-operator.boolFlag" (dict "flag" "allow-cross-namespace-dependencies" "value" $o.allowCrossNamespaceDependencies) }}
- {{ include "oam-operator.boolFlag" (dict "flag" "dependent-events" "value" $o.dependentEvents) }}
- {{ include "oam-operator.boolFlag" (dict "flag" "readiness-watch" "value" (include "oam-operator.watchOwned" .)) }}
- {{ include "oam-operator.boolFlag" (dict "flag" "url-sources" "value" $o.urlSources.enabled) }}
{{- if $o.urlSources.allowedNetworks }}
- --url-source-allowed-networks={{ join "," $o.urlSources.allowedNetworks }}
{{- end }}
{{- if $o.notifications.allowedNetworks }}
- --notification-allowed-networks={{ join "," $o.notifications.allowedNetworks }}
{{- end }}
- --metrics-port={{ if .Values.metrics.enabled }}{{ int .Values.metrics.port }}{{ else }}0{{ end }}
- --health-port={{ int .Values.health.port }}
- --log-format={{ $o.logFormat }}
- --log-level={{ $o.logLevel }}
{{- with .Values.clusterProfiles.secretNamespaces }}
- --profile-secret-namespaces={{ join "," . }}
{{- end }}
{{- with .Values.clusterProfiles.inventory }}
{{- if .namespaces }}
- --inventory-namespaces={{ join "," .namespaces }}
- --inventory-access-provider={{ .accessProvider }}
{{- end }}
{{- end }}
{{- with .Values.leaderElection }}
- {{ include "oam-operator.boolFlag" (dict "flag" "leader-election" "value" .enabled) }}
{{- if .enabled }}
- --leader-election-id={{ include "oam-operator.fullname" $ }}
- --leader-election-lease-duration={{ .leaseDuration }}
- --leader-election-renew-deadline={{ .renewDeadline }}
- --leader-election-retry-period={{ .retryPeriod }}
{{- end }}
{{- end }}
{{- if .Values.peering.enabled }}
- --peering={{ include "oam-operator.peeringName" . }}
- --priority={{ int .Values.peering.priority }}
{{- end }}
{{- with (include "oam-operator.admissionArgs" .) }}
{{ . }}
{{- end }}
{{- range $o.extraArgs }}
- {{ . }}
{{- end }}
{{- end }}

{{/* kopf's peering resources, when peering is enabled: cluster-wide or per namespace. */}}
{{- define "oam-operator.peeringRule" -}}
{{- if .Values.peering.enabled }}
- apiGroups: [kopf.dev]
  resources: [{{ if .Values.operator.watchNamespaces }}kopfpeerings{{ else }}clusterkopfpeerings{{ end }}]
  verbs: [get, list, watch, patch]
{{- end }}
{{- end }}

{{/* The least-privilege rules that live in a namespace (a Role in namespace-scoped mode). */}}
{{- define "oam-operator.leastPrivilegeNamespacedRules" -}}
{{- /* create and delete: the cluster Applications of a topology policy (docs/multicluster.md#topology). */}}
- apiGroups: [oam-operator.dev]
  resources: [applications]
  verbs: [get, list, watch, create, patch, update, delete]
- apiGroups: [oam-operator.dev]
  resources: [applications/status]
  verbs: [get, patch, update]
- apiGroups: [oam-operator.dev]
  resources: [applications/finalizers]
  verbs: [update]
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [impersonate]
{{- /* The revision history (docs/operator.md#revision-history), with the operator's own identity. */}}
- apiGroups: [apps]
  resources: [controllerrevisions]
  verbs: [get, list, create, patch, delete]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [rolebindings, roles]
  verbs: [list, watch]
{{- /* Notifications (docs/notifications.md#rbac): read, their status (the episodes), and get (never list or
watch) of the Secrets they name, in their own namespace. */}}
- apiGroups: [oam-operator.dev]
  resources: [notifications]
  verbs: [get, list, watch]
- apiGroups: [oam-operator.dev]
  resources: [notifications/status]
  verbs: [get, patch]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
{{- include "oam-operator.peeringRule" . }}
{{- include "oam-operator.ownedReadRules" (dict "root" . "scope" "namespaced") }}
{{- end }}

{{/* The cluster-scoped rules of the leastPrivilege and namespace-scoped modes: ClusterProfiles,
the kube-system Namespace (the cluster id), and kopf's own observation (its documented framework
RBAC; read-only): CRDs, and the Namespaces when it watches given namespaces. Without the last
two kopf retries each listing 9 times (about a minute, logged as errors) before it starts. */}}
{{- define "oam-operator.clusterScopedRules" -}}
- apiGroups: [oam-operator.dev]
  resources: [clusterprofiles]
  verbs: [get, list, watch]
{{- /* The profile's Ready condition (docs/multicluster.md#the-clusterprofiles-status). */}}
- apiGroups: [oam-operator.dev]
  resources: [clusterprofiles/status]
  verbs: [patch]
{{- /* Platform teams' types, hot-loaded, and their Ready condition (docs/definitions.md#the-operator). */}}
- apiGroups: [oam-operator.dev]
  resources: [componentdefinitions, traitdefinitions]
  verbs: [get, list, watch]
- apiGroups: [oam-operator.dev]
  resources: [componentdefinitions/status, traitdefinitions/status]
  verbs: [patch]
{{- if not .Values.operator.clusterId }}
- apiGroups: [""]
  resources: [namespaces]
  resourceNames: [kube-system]
  verbs: [get]
{{- end }}
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [list, watch]
{{- if .Values.operator.watchNamespaces }}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end }}
{{- include "oam-operator.ownedReadRules" (dict "root" . "scope" "cluster") }}
{{- end }}

{{/* The kinds the built-in catalog writes (operator/oam_operator/oam/catalog), as resources by API
group and scope, plus Jobs (watched from the start, controller/reconcile/readiness.py WATCHED). Never
Secrets (controller/service/ownedwatch.py EXCLUDED). docs/chart.md#watches-of-owned-objects. */}}
{{- define "oam-operator.ownedKinds" -}}
namespaced:
  "": [configmaps, persistentvolumeclaims, serviceaccounts, services]
  apps: [daemonsets, deployments, statefulsets]
  autoscaling: [horizontalpodautoscalers]
  barmancloud.cnpg.io: [objectstores]
  batch: [cronjobs, jobs]
  cert-manager.io: [certificates]
  cilium.io: [ciliumnetworkpolicies]
  external-secrets.io: [externalsecrets]
  gateway.networking.k8s.io: [httproutes]
  helm.toolkit.fluxcd.io: [helmreleases]
  kustomize.toolkit.fluxcd.io: [kustomizations]
  networking.k8s.io: [ingresses, networkpolicies]
  policy: [poddisruptionbudgets]
  postgresql.cnpg.io: [clusters, databases, poolers]
  rbac.authorization.k8s.io: [rolebindings, roles]
  source.toolkit.fluxcd.io: [helmrepositories, ocirepositories]
  volsync.backube: [replicationsources]
cluster:
  apiextensions.k8s.io: [customresourcedefinitions]
  rbac.authorization.k8s.io: [clusterrolebindings, clusterroles]
{{- end }}

{{/* leastPrivilege with the watch of owned objects: read only (get, list, watch) of the owned kinds
of one scope ("namespaced": in the ClusterRole, or each watched namespace's Role in
namespace-scoped mode; "cluster": the ClusterRole, only with operator.allowClusterScopedObjects,
without which no Application owns such an object). rbac.mode=full has them already. Arguments:
root, scope. */}}
{{- define "oam-operator.ownedReadRules" -}}
{{- $root := .root }}
{{- if and (include "oam-operator.leastPrivilege" $root) (include "oam-operator.watchOwned" $root) (or (eq .scope "namespaced") $root.Values.operator.allowClusterScopedObjects) }}
{{- range $group, $resources := index (include "oam-operator.ownedKinds" $root | fromYaml) .scope }}
- apiGroups: [{{ $group | default (quote "") }}]
  resources: [{{ join ", " $resources }}]
  verbs: [get, list, watch]
{{- end }}
{{- end }}
{{- end }}

{{/* Every verb on every resource of every group. */}}
{{- define "oam-operator.fullRules" -}}
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
{{- end }}

{{/* rbac.extraRules, indented for a rules: list (empty when there are none). */}}
{{- define "oam-operator.extraRules" -}}
{{- with .Values.rbac.extraRules }}
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* A CRD from files/crds/ (byte-identical copies of the repository's crds/), with the chart's
labels and, with crds.keep, helm.sh/resource-policy: keep. Arguments: root, file. */}}
{{- define "oam-operator.crd" -}}
{{- $root := .root }}
{{- $crd := $root.Files.Get .file | fromYaml }}
{{- if or (not $crd) (hasKey $crd "Error") }}
{{- fail (printf "%s is not a CRD manifest: %v" .file $crd) }}
{{- end }}
{{- $metadata := $crd.metadata }}
{{- $_ := set $metadata "labels" (include "oam-operator.labels" $root | fromYaml) }}
{{- if $root.Values.crds.keep }}
{{- $_ := set $metadata "annotations" (dict "helm.sh/resource-policy" "keep") }}
{{- end }}
{{- toYaml $crd }}
{{- end }}

{{/* The admission webhook's names (docs/admission.md): its configuration, Service, Secret and host names. */}}
{{- define "oam-operator.webhookName" -}}
{{- include "oam-operator.fullname" . | trunc 53 | trimSuffix "-" }}-admission
{{- end }}

{{- define "oam-operator.webhookSecret" -}}
{{- include "oam-operator.fullname" . | trunc 52 | trimSuffix "-" }}-webhook-tls
{{- end }}

{{- define "oam-operator.webhookService" -}}
{{- include "oam-operator.fullname" . | trunc 55 | trimSuffix "-" }}-webhook
{{- end }}

{{/* The serving certificate's host names, comma-separated: the URL's host, or the Service's DNS names. */}}
{{- define "oam-operator.webhookHosts" -}}
{{- if .Values.admission.url }}
{{- (urlParse .Values.admission.url).hostname }}
{{- else }}
{{- $service := include "oam-operator.webhookService" . }}
{{- printf "%s.%s.svc,%s.%s.svc.cluster.local" $service .Release.Namespace $service .Release.Namespace }}
{{- end }}
{{- end }}

{{/* The webhook flags of `oam-operator run`, as a YAML list (empty when admission is off). */}}
{{- define "oam-operator.admissionArgs" -}}
{{- if .Values.admission.enabled }}
- --admission
- --admission-port={{ int .Values.admission.port }}
{{- if .Values.admission.certManager.enabled }}
- --admission-cert-dir=/etc/oam-operator/webhook
{{- else }}
- --admission-secret={{ .Release.Namespace }}/{{ include "oam-operator.webhookSecret" . }}
- --admission-hosts={{ include "oam-operator.webhookHosts" . }}
- --admission-webhook-configuration={{ include "oam-operator.webhookName" . }}
{{- end }}
{{- end }}
{{- end }}
