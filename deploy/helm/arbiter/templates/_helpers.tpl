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

{{/*
Seconds the kubelet waits after the preStop hook starts before SIGKILL: the preStop
sleep, the wire guard's close (wireGuard.enabled), the drain, the margin.
*/}}
{{- define "arbiter.terminationGracePeriodSeconds" -}}
{{- $guard := 0 }}
{{- if .Values.wireGuard.enabled }}
{{- $guard = include "arbiter.wireGuardCloseSeconds" . | int }}
{{- end }}
{{- add .Values.server.preStopSleepSeconds $guard .Values.server.drainTimeoutSeconds .Values.server.terminationGraceMarginSeconds }}
{{- end }}

{{/*
A Go duration ("1m30s", "1500ms": the schema's pattern, units h m s ms us µs ns) in
seconds, a float (sprig's addf and mulf compute in decimal: 15000000000ns is 15).
*/}}
{{- define "arbiter.durationSeconds" -}}
{{- $unit := dict "h" 3600.0 "m" 60.0 "s" 1.0 "ms" 0.001 "us" 0.000001 "µs" 0.000001 "ns" 0.000000001 }}
{{- $total := 0.0 }}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" . -1 }}
{{- $n := regexFind "^[0-9]+(\\.[0-9]+)?" . }}
{{- $total = addf $total (mulf (float64 $n) (get $unit (trimPrefix $n .))) }}
{{- end }}
{{- $total }}
{{- end }}

{{/*
Seconds the wire guard may take to end its connections on SIGTERM, before the gRPC
drain starts (guard/conn.go, conn.run): each close waits up to the write timeout
(wireGuard.writeTimeout; serve's default 10s) for its write, 5 s (closeWait) for the
peer's close, 1 s more, then 5 s for its last reports to reach the store. The
connections close in parallel, so this bounds them all.
*/}}
{{- define "arbiter.wireGuardCloseSeconds" -}}
{{- $write := 10.0 }}
{{- with .Values.wireGuard.writeTimeout }}
{{- $write = include "arbiter.durationSeconds" . | float64 }}
{{- end }}
{{- add (ceil $write) 11 }}
{{- end }}

{{/*
The wire guard's Service: <fullname>-wire-guard, the fullname cut to 52 characters so
that the name stays a 63-character DNS label.
*/}}
{{- define "arbiter.wireGuardServiceName" -}}
{{- printf "%s-wire-guard" (include "arbiter.fullname" . | trunc 52 | trimSuffix "-") }}
{{- end }}

{{/*
The upstream the guard dials for one protocol, as serve will use it: the value, serve's
default when it is empty (cmd/arbiter/serve_proxy.go), "" when it is off ("-", or
Vertex's empty default). Takes (dict "root" $ "name" gemini|vertex|openai).
*/}}
{{- define "arbiter.wireGuardUpstream" -}}
{{- $v := get .root.Values.wireGuard.upstreams .name }}
{{- if eq $v "-" }}
{{- else if $v }}
{{- $v }}
{{- else }}
{{- get (dict "gemini" "wss://generativelanguage.googleapis.com" "vertex" "" "openai" "wss://api.openai.com") .name }}
{{- end }}
{{- end }}

{{/*
The TCP ports of the upstreams in use (a URL's own port, or 443 for wss:// and 80 for
ws://), without repeats, as a YAML list.
*/}}
{{- define "arbiter.wireGuardUpstreamPorts" -}}
{{- $ports := list }}
{{- range $name := list "gemini" "vertex" "openai" }}
{{- with include "arbiter.wireGuardUpstream" (dict "root" $ "name" $name) }}
{{- $u := urlParse . }}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $u.host) }}
{{- $ports = append $ports (int (default (ternary "443" "80" (eq $u.scheme "wss")) $port)) }}
{{- end }}
{{- end }}
{{- toYaml (uniq $ports) }}
{{- end }}

{{/* The upstream CA's file in the container (wireGuard.upstreamCA), "" without one. */}}
{{- define "arbiter.wireGuardCAFile" -}}
{{- $ca := .Values.wireGuard.upstreamCA }}
{{- if or $ca.existingSecret $ca.existingConfigMap }}
{{- printf "/etc/arbiter/wire-guard-upstream-ca/%s" $ca.key }}
{{- end }}
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
{{- $_ = set $own "arbiter.voicearbiter.io/wire-guard" "" }}
{{- range $what, $labels := dict "commonLabels" .Values.commonLabels "podLabels" .Values.podLabels }}
{{- range $k, $v := $labels }}
{{- if hasKey $own $k }}
{{- fail (printf "%s sets %s, a label the chart sets itself (selectors and Helm rely on it): drop it." $what $k) }}
{{- end }}
{{- end }}
{{- end }}
{{- $volumes := list "tools" "auth-tokens" "tls" "tls-client-ca" "wire-guard-tls" "wire-guard-upstream-ca" "tmp" "data" }}
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
{{- $wg := .Values.wireGuard }}
{{- if and $wg.tls.enabled (not $wg.tls.existingSecret) }}
{{- fail "wireGuard.tls.enabled needs wireGuard.tls.existingSecret: the name of a kubernetes.io/tls Secret (tls.crt, tls.key)." }}
{{- end }}
{{- if and $wg.upstreamCA.existingSecret $wg.upstreamCA.existingConfigMap }}
{{- fail "wireGuard.upstreamCA: existingSecret or existingConfigMap, not both." }}
{{- end }}
{{- if $wg.enabled }}
{{- if not (or (include "arbiter.wireGuardUpstream" (dict "root" . "name" "gemini")) (include "arbiter.wireGuardUpstream" (dict "root" . "name" "vertex")) (include "arbiter.wireGuardUpstream" (dict "root" . "name" "openai"))) }}
{{- fail "wireGuard.upstreams: every upstream is off (serve refuses --proxy-listen without one): leave gemini or openai empty for serve's default, or set one." }}
{{- end }}
{{- $port := int $wg.port }}
{{- if or (eq $port (int .Values.server.port)) (and .Values.metrics.enabled (eq $port (int .Values.metrics.port))) (and (eq (include "arbiter.probeType" .) "grpc") (eq $port (int .Values.probes.port))) }}
{{- fail (printf "wireGuard.port must differ from server.port, metrics.port and probes.port (it is %d)." $port) }}
{{- end }}
{{- end }}
{{- end }}
