{{/*
The pod template of the arbiter workload (the Deployment, or the StatefulSet with
persistence.enabled).
*/}}
{{- define "arbiter.podTemplate" -}}
{{- $probeType := include "arbiter.probeType" . -}}
metadata:
  {{- $annotations := dict }}
  {{- if not .Values.tools.existingConfigMap }}
  {{- /* A change of the tool policy changes this hash and so rolls the pods. */}}
  {{- $_ := set $annotations "checksum/tools" (include (print $.Template.BasePath "/configmap.yaml") . | sha256sum) }}
  {{- end }}
  {{- $annotations = merge $annotations .Values.podAnnotations }}
  {{- with $annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  labels:
    {{- include "arbiter.labelsWith" (dict "root" . "extra" .Values.podLabels) | nindent 4 }}
spec:
  serviceAccountName: {{ include "arbiter.serviceAccountName" . }}
  # The server never talks to the Kubernetes API.
  automountServiceAccountToken: false
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  # preStop sleep + the wire guard's close (wireGuard.enabled) + drain
  # (--drain-timeout) + margin: the server always gets to finish its drain before
  # SIGKILL.
  terminationGracePeriodSeconds: {{ include "arbiter.terminationGracePeriodSeconds" . }}
  {{- with .Values.initContainers }}
  initContainers:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: arbiter
      image: {{ include "arbiter.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - --listen=:{{ .Values.server.port }}
        - --tools=/etc/arbiter/tools/tools.yaml
        - --log-format={{ .Values.server.logFormat }}
        - --log-level={{ .Values.server.logLevel }}
        - --idle-ttl={{ .Values.server.idleTTL }}
        - --max-wait={{ .Values.server.maxWait }}
        - --drain-timeout={{ .Values.server.drainTimeoutSeconds }}s
        - --health-interval={{ .Values.server.healthInterval }}
        - --rate-limit={{ .Values.server.rateLimit }}
        - --rate-burst={{ .Values.server.rateBurst }}
        - --rpc-timeout={{ .Values.server.rpcTimeout }}
        - --max-msg-size={{ int64 .Values.server.maxMsgSize }}
        - --max-sessions={{ int64 .Values.server.maxSessions }}
        - --max-calls-per-session={{ int64 .Values.server.maxCallsPerSession }}
        {{- if .Values.metrics.enabled }}
        - --metrics-listen=:{{ .Values.metrics.port }}
        - --debug-pages={{ .Values.metrics.debugPages }}
        {{- end }}
        {{- if eq $probeType "grpc" }}
        - --health-listen=:{{ .Values.probes.port }}
        {{- end }}
        {{- if .Values.persistence.enabled }}
        - --state-file={{ include "arbiter.stateFile" . }}
        {{- end }}
        {{- if .Values.auth.enabled }}
        - --auth-tokens-file=/etc/arbiter/auth/{{ .Values.auth.existingSecretKey }}
        {{- end }}
        {{- if .Values.tls.enabled }}
        - --tls-cert=/etc/arbiter/tls/tls.crt
        - --tls-key=/etc/arbiter/tls/tls.key
        {{- if .Values.tls.clientCA.enabled }}
        - --tls-client-ca=/etc/arbiter/tls-client-ca/{{ .Values.tls.clientCA.existingSecretKey }}
        {{- end }}
        {{- end }}
        {{- $wg := .Values.wireGuard }}
        {{- if $wg.enabled }}
        # The wire guard: empty values are left to serve's defaults; "-" turns an
        # upstream off (an empty flag).
        - --proxy-listen=:{{ $wg.port }}
        {{- range $name := list "gemini" "vertex" "openai" }}
        {{- $v := get $wg.upstreams $name }}
        {{- if $v }}
        - {{ printf "--proxy-%s-upstream=%s" $name (ternary "" $v (eq $v "-")) | quote }}
        {{- end }}
        {{- end }}
        {{- range list (list "answer-wait" $wg.answerWait) (list "register-wait" $wg.registerWait) (list "write-timeout" $wg.writeTimeout) (list "dial-timeout" $wg.dialTimeout) }}
        {{- if index . 1 }}
        - --proxy-{{ index . 0 }}={{ index . 1 }}
        {{- end }}
        {{- end }}
        - --proxy-record={{ $wg.record }}
        - --proxy-add-transcription={{ $wg.addTranscription }}
        {{- if $wg.tls.enabled }}
        - --proxy-tls-cert=/etc/arbiter/wire-guard-tls/tls.crt
        - --proxy-tls-key=/etc/arbiter/wire-guard-tls/tls.key
        {{- end }}
        {{- with include "arbiter.wireGuardCAFile" . }}
        - --proxy-ca-file={{ . }}
        {{- end }}
        {{- end }}
        {{- range .Values.server.extraArgs }}
        - {{ . | quote }}
        {{- end }}
      env:
        {{- if .Values.redis.enabled }}
        - name: ARBITER_REDIS_URL
          valueFrom:
            secretKeyRef:
              name: {{ .Values.redis.existingSecret }}
              key: {{ .Values.redis.existingSecretKey }}
        {{- end }}
        # The Go runtime collects harder as the heap nears the container's limit,
        # instead of being OOM-killed.
        - name: GOMEMLIMIT
          valueFrom:
            resourceFieldRef:
              containerName: arbiter
              resource: limits.memory
        {{- with .Values.server.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .Values.server.extraEnvFrom }}
      envFrom:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: grpc
          containerPort: {{ .Values.server.port }}
          protocol: TCP
        {{- if .Values.metrics.enabled }}
        - name: metrics
          containerPort: {{ .Values.metrics.port }}
          protocol: TCP
        {{- end }}
        {{- if .Values.wireGuard.enabled }}
        # The wire guard's WebSockets (ws://, or wss:// with wireGuard.tls).
        - name: wire-guard
          containerPort: {{ .Values.wireGuard.port }}
          protocol: TCP
        {{- end }}
        {{- if eq $probeType "grpc" }}
        # grpc.health.v1 only, plaintext, for the kubelet's probes.
        - name: health
          containerPort: {{ .Values.probes.port }}
          protocol: TCP
        {{- end }}
      startupProbe:
        {{- include "arbiter.probeAction" (dict "root" . "service" .Values.probes.startup.service) | nindent 8 }}
        periodSeconds: {{ .Values.probes.startup.periodSeconds }}
        timeoutSeconds: {{ .Values.probes.startup.timeoutSeconds }}
        failureThreshold: {{ .Values.probes.startup.failureThreshold }}
      readinessProbe:
        {{- include "arbiter.probeAction" (dict "root" . "service" .Values.probes.readiness.service) | nindent 8 }}
        initialDelaySeconds: {{ .Values.probes.readiness.initialDelaySeconds }}
        periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
        timeoutSeconds: {{ .Values.probes.readiness.timeoutSeconds }}
        failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
        successThreshold: {{ .Values.probes.readiness.successThreshold }}
      livenessProbe:
        {{- include "arbiter.probeAction" (dict "root" . "service" .Values.probes.liveness.service) | nindent 8 }}
        initialDelaySeconds: {{ .Values.probes.liveness.initialDelaySeconds }}
        periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
        timeoutSeconds: {{ .Values.probes.liveness.timeoutSeconds }}
        failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
      {{- if gt (int .Values.server.preStopSleepSeconds) 0 }}
      lifecycle:
        preStop:
          # Keep serving while the pod leaves the endpoints; SIGTERM (and the
          # server's drain) comes after.
          sleep:
            seconds: {{ .Values.server.preStopSleepSeconds }}
      {{- end }}
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: tools
          mountPath: /etc/arbiter/tools
          readOnly: true
        {{- if .Values.auth.enabled }}
        - name: auth-tokens
          mountPath: /etc/arbiter/auth
          readOnly: true
        {{- end }}
        {{- if .Values.tls.enabled }}
        - name: tls
          mountPath: /etc/arbiter/tls
          readOnly: true
        {{- if .Values.tls.clientCA.enabled }}
        - name: tls-client-ca
          mountPath: /etc/arbiter/tls-client-ca
          readOnly: true
        {{- end }}
        {{- end }}
        {{- if .Values.wireGuard.enabled }}
        {{- if .Values.wireGuard.tls.enabled }}
        - name: wire-guard-tls
          mountPath: /etc/arbiter/wire-guard-tls
          readOnly: true
        {{- end }}
        {{- if include "arbiter.wireGuardCAFile" . }}
        - name: wire-guard-upstream-ca
          mountPath: /etc/arbiter/wire-guard-upstream-ca
          readOnly: true
        {{- end }}
        {{- end }}
        # The root filesystem is read-only; the Go runtime and libraries may want a
        # writable /tmp.
        - name: tmp
          mountPath: /tmp
        {{- if .Values.persistence.enabled }}
        # The state file (--state-file), where the sessions outlive the pod.
        - name: data
          mountPath: {{ .Values.persistence.mountPath }}
        {{- end }}
        {{- with .Values.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    {{- with .Values.sidecars }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  volumes:
    - name: tools
      configMap:
        name: {{ include "arbiter.toolsConfigMapName" . }}
        items:
          - key: tools.yaml
            path: tools.yaml
    {{- if .Values.auth.enabled }}
    - name: auth-tokens
      secret:
        secretName: {{ .Values.auth.existingSecret }}
        defaultMode: 0440
        items:
          - key: {{ .Values.auth.existingSecretKey }}
            path: {{ .Values.auth.existingSecretKey }}
    {{- end }}
    {{- if .Values.tls.enabled }}
    - name: tls
      secret:
        secretName: {{ .Values.tls.existingSecret }}
        defaultMode: 0440
        items:
          - key: tls.crt
            path: tls.crt
          - key: tls.key
            path: tls.key
    {{- if .Values.tls.clientCA.enabled }}
    - name: tls-client-ca
      secret:
        secretName: {{ default .Values.tls.existingSecret .Values.tls.clientCA.existingSecret }}
        defaultMode: 0440
        items:
          - key: {{ .Values.tls.clientCA.existingSecretKey }}
            path: {{ .Values.tls.clientCA.existingSecretKey }}
    {{- end }}
    {{- end }}
    {{- if .Values.wireGuard.enabled }}
    {{- if .Values.wireGuard.tls.enabled }}
    - name: wire-guard-tls
      secret:
        secretName: {{ .Values.wireGuard.tls.existingSecret }}
        defaultMode: 0440
        items:
          - key: tls.crt
            path: tls.crt
          - key: tls.key
            path: tls.key
    {{- end }}
    {{- with .Values.wireGuard.upstreamCA }}
    {{- if .existingSecret }}
    - name: wire-guard-upstream-ca
      secret:
        secretName: {{ .existingSecret }}
        defaultMode: 0440
        items:
          - key: {{ .key }}
            path: {{ .key }}
    {{- else if .existingConfigMap }}
    - name: wire-guard-upstream-ca
      configMap:
        name: {{ .existingConfigMap }}
        items:
          - key: {{ .key }}
            path: {{ .key }}
    {{- end }}
    {{- end }}
    {{- end }}
    - name: tmp
      emptyDir:
        sizeLimit: 16Mi
    {{- if .Values.persistence.enabled }}
    - name: data
      persistentVolumeClaim:
        claimName: {{ include "arbiter.claimName" . }}
    {{- end }}
    {{- with .Values.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- $antiAffinity := .Values.podAntiAffinity }}
  {{- if or (ne $antiAffinity "none") .Values.affinity }}
  affinity:
    {{- with .Values.affinity }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- if eq $antiAffinity "hard" }}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: {{ .Values.podAntiAffinityTopologyKey }}
          labelSelector:
            matchLabels:
              {{- include "arbiter.selectorLabels" . | nindent 14 }}
    {{- else if eq $antiAffinity "soft" }}
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          podAffinityTerm:
            topologyKey: {{ .Values.podAntiAffinityTopologyKey }}
            labelSelector:
              matchLabels:
                {{- include "arbiter.selectorLabels" . | nindent 16 }}
    {{- end }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
