{{/* Chart name, truncated to the 63 characters a DNS label allows. */}}
{{- define "arbiter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name: the release name, or release-chart when the release name
does not contain the chart name. The headless Service appends "-headless" (9
characters), so this stops at 54.
*/}}
{{- define "arbiter.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 54 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "arbiter.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels the chart sets on every object (commonLabels may not set these keys). */}}
{{- define "arbiter.chartLabels" -}}
helm.sh/chart: {{ include "arbiter.chart" . }}
{{ include "arbiter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: server
{{- end }}

{{/*
Labels of an object: the chart's, then extra (a map), then commonLabels; the first to
set a key wins. Takes (dict "root" $ "extra" MAP).
*/}}
{{- define "arbiter.labelsWith" -}}
{{- toYaml (merge (dict) (include "arbiter.chartLabels" .root | fromYaml) (default (dict) .extra) .root.Values.commonLabels) }}
{{- end }}

{{/* Labels on every object: the chart's and commonLabels. */}}
{{- define "arbiter.labels" -}}
{{- include "arbiter.labelsWith" (dict "root" . "extra" (dict)) }}
{{- end }}

{{/*
Annotations of an object: extra (a map: the object's own annotations value), then
commonAnnotations; empty when both are. Takes (dict "root" $ "extra" MAP).
*/}}
{{- define "arbiter.annotations" -}}
{{- $a := merge (dict) (default (dict) .extra) .root.Values.commonAnnotations }}
{{- if $a }}
{{- toYaml $a }}
{{- end }}
{{- end }}

{{/* Labels that select the pods (immutable on a Deployment: keep them small). */}}
{{- define "arbiter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "arbiter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "arbiter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "arbiter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference: repository@digest, or repository:tag (tag defaults to appVersion). */}}
{{- define "arbiter.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Pod count when autoscaling is off: replicaCount, or 3 with Redis and 1 without. */}}
{{- define "arbiter.replicas" -}}
{{- if hasKey .Values "replicaCount" }}
{{- int .Values.replicaCount }}
{{- else if .Values.redis.enabled }}
{{- 3 }}
{{- else }}
{{- 1 }}
{{- end }}
{{- end }}

{{/* "true" when more than one pod can run at once (a PodDisruptionBudget makes sense). */}}
{{- define "arbiter.multiReplica" -}}
{{- if or .Values.autoscaling.enabled (gt (int (include "arbiter.replicas" .)) 1) }}true{{ end }}
{{- end }}

{{/* Probe kind: grpc (on the plaintext health port, TLS or not) or tcp (auto: grpc). */}}
{{- define "arbiter.probeType" -}}
{{- if eq .Values.probes.type "auto" }}
{{- "grpc" }}
{{- else }}
{{- .Values.probes.type }}
{{- end }}
{{- end }}

{{/*
One probe's action: the kubelet's gRPC probe on the health port asking for service, or
a TCP connect to the gRPC port. Takes (dict "root" $ "service" NAME).
*/}}
{{- define "arbiter.probeAction" -}}
{{- if eq (include "arbiter.probeType" .root) "grpc" -}}
grpc:
  port: {{ .root.Values.probes.port }}
  service: {{ .service | quote }}
{{- else -}}
tcpSocket:
  port: grpc
{{- end }}
{{- end }}

{{/* Seconds the kubelet waits after the preStop hook starts before SIGKILL. */}}
{{- define "arbiter.terminationGracePeriodSeconds" -}}
{{- add .Values.server.preStopSleepSeconds .Values.server.drainTimeoutSeconds .Values.server.terminationGraceMarginSeconds }}
{{- end }}

{{/* The claim the state file lives on (persistence.enabled). */}}
{{- define "arbiter.claimName" -}}
{{- default (printf "%s-data" (include "arbiter.fullname" .)) .Values.persistence.existingClaim }}
{{- end }}

{{/* The state file's path in the container (--state-file). */}}
{{- define "arbiter.stateFile" -}}
{{- printf "%s/state.db" (trimSuffix "/" .Values.persistence.mountPath) }}
{{- end }}

{{- define "arbiter.toolsConfigMapName" -}}
{{- default (printf "%s-tools" (include "arbiter.fullname" .)) .Values.tools.existingConfigMap }}
{{- end }}

{{/*
Rules values.schema.json also states (helm lint ignores `fail`, so both say it). Fails
the render with a message that says what to change.
*/}}
{{- define "arbiter.validate" -}}
{{- if not .Values.redis.enabled }}
{{- if and .Values.persistence.enabled (gt (int (include "arbiter.replicas" .)) 1) }}
{{- fail (printf "replicaCount=%v with persistence.enabled: the embedded store's state file belongs to one pod, and two pods must never open it. Use 1 replica, or Redis (redis.enabled=true, persistence.enabled=false) for several." .Values.replicaCount) }}
{{- end }}
{{- if gt (int (include "arbiter.replicas" .)) 1 }}
{{- fail (printf "replicaCount=%v needs redis.enabled=true: the embedded store lives in one pod's memory and is not shared, so other replicas would not see its sessions. Use 1 replica or enable Redis." .Values.replicaCount) }}
{{- end }}
{{- if .Values.autoscaling.enabled }}
{{- fail "autoscaling.enabled needs redis.enabled=true: the embedded store lives in one pod's memory and is not shared between replicas." }}
{{- end }}
{{- else if not .Values.redis.existingSecret }}
{{- fail "redis.enabled needs redis.existingSecret: the name of a Secret holding the Redis URL." }}
{{- end }}
{{- if and .Values.persistence.enabled .Values.redis.enabled }}
{{- fail "persistence.enabled is for the embedded store (its state file); Redis keeps its own state: drop one of persistence.enabled and redis.enabled." }}
{{- end }}
{{- if and .Values.auth.enabled (not .Values.auth.existingSecret) }}
{{- fail "auth.enabled needs auth.existingSecret: the name of a Secret holding the token -> tenant YAML." }}
{{- end }}
{{- if and .Values.tls.enabled (not .Values.tls.existingSecret) }}
{{- fail "tls.enabled needs tls.existingSecret: the name of a kubernetes.io/tls Secret." }}
{{- end }}
{{- if and .Values.tls.clientCA.enabled (not .Values.tls.enabled) }}
{{- fail "tls.clientCA.enabled (mutual TLS) needs tls.enabled." }}
{{- end }}
{{- $own := include "arbiter.chartLabels" . | fromYaml }}
{{- $_ := set $own "arbiter.voicearbiter.io/headless" "" }}
{{- range $what, $labels := dict "commonLabels" .Values.commonLabels "podLabels" .Values.podLabels }}
{{- range $k, $v := $labels }}
{{- if hasKey $own $k }}
{{- fail (printf "%s sets %s, a label the chart sets itself (selectors and Helm rely on it): drop it." $what $k) }}
{{- end }}
{{- end }}
{{- end }}
{{- $volumes := list "tools" "auth-tokens" "tls" "tls-client-ca" "tmp" "data" }}
{{- range .Values.extraVolumes }}
{{- if has .name $volumes }}
{{- fail (printf "extraVolumes: the name %s is the chart's own volume: pick another." .name) }}
{{- end }}
{{- end }}
{{- $containers := list "arbiter" }}
{{- range concat .Values.initContainers .Values.sidecars }}
{{- if has .name $containers }}
{{- fail (printf "initContainers and sidecars: the name %s is taken (arbiter is the server's container; names are unique in a pod)." .name) }}
{{- end }}
{{- $containers = append $containers .name }}
{{- end }}
{{- if and (not .Values.tools.existingConfigMap) (not .Values.tools.policy) }}
{{- fail "set tools.policy (the tool-policy YAML) or tools.existingConfigMap." }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- fail "autoscaling.minReplicas is above autoscaling.maxReplicas." }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled." }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.server.port) }}
{{- fail "metrics.port must differ from server.port." }}
{{- end }}
{{- if and (eq (include "arbiter.probeType" .) "grpc") (or (eq (int .Values.probes.port) (int .Values.server.port)) (and .Values.metrics.enabled (eq (int .Values.probes.port) (int .Values.metrics.port)))) }}
{{- fail "probes.port (the plaintext health port) must differ from server.port and metrics.port." }}
{{- end }}
{{- end }}
