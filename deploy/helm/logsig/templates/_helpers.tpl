{{/* Name of the chart, or nameOverride. */}}
{{- define "logsig.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Object name prefix: fullnameOverride, the release name if it holds the chart name, or release-chart. */}}
{{- define "logsig.fullname" -}}
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

{{/* Labels that select the pods. */}}
{{- define "logsig.selectorLabels" -}}
app.kubernetes.io/name: {{ include "logsig.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "logsig.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "logsig.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: logsig
{{- end }}

{{- define "logsig.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "logsig.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* True (non-empty) when the Kafka connection uses SASL. */}}
{{- define "logsig.sasl" -}}
{{- if hasPrefix "SASL" .Values.kafka.securityProtocol }}true{{ end }}
{{- end }}

{{/* True (non-empty) when the Kafka connection uses TLS. */}}
{{- define "logsig.tls" -}}
{{- if or (eq .Values.kafka.securityProtocol "SSL") (eq .Values.kafka.securityProtocol "SASL_SSL") }}true{{ end }}
{{- end }}

{{/* The Secret holding the SASL user name and password. */}}
{{- define "logsig.saslSecret" -}}
{{- if .Values.kafka.sasl.create }}
{{- printf "%s-kafka" (include "logsig.fullname" .) }}
{{- else }}
{{- required "kafka.sasl.existingSecret is required with a SASL securityProtocol (or set kafka.sasl.create)" .Values.kafka.sasl.existingSecret }}
{{- end }}
{{- end }}

{{/* The ConfigMap of the site's signature files, or empty when there are none. */}}
{{- define "logsig.signaturesConfigMap" -}}
{{- if .Values.catalog.existingConfigMap }}
{{- .Values.catalog.existingConfigMap }}
{{- else if .Values.catalog.signatures }}
{{- printf "%s-signatures" (include "logsig.fullname" .) }}
{{- end }}
{{- end }}

{{/* Keys (file names) of the signatures ConfigMap that logsig loads. */}}
{{- define "logsig.signatureKeys" -}}
{{- if .Values.catalog.existingConfigMap }}
{{- toJson .Values.catalog.existingConfigMapKeys }}
{{- else }}
{{- toJson (keys .Values.catalog.signatures | sortAlpha) }}
{{- end }}
{{- end }}

{{/*
logsig.yaml: settings derived from the values, with .Values.settings merged over them.
Catalog paths list files, not the directory: a ConfigMap volume also holds every file under the
hidden ..data/ and ..<timestamp>/ entries, which a directory scan would load twice.
*/}}
{{- define "logsig.settings" -}}
{{- $kafka := dict
  "bootstrap_servers" .Values.kafka.bootstrapServers
  "group_id" .Values.kafka.groupId
  "topics" .Values.kafka.topics
  "output_topic" .Values.kafka.outputTopic
  "dead_letter_topic" .Values.kafka.deadLetterTopic
  "auto_offset_reset" .Values.kafka.autoOffsetReset
  "security_protocol" .Values.kafka.securityProtocol }}
{{- if include "logsig.sasl" . }}
{{- $_ := set $kafka "sasl_mechanism" .Values.kafka.sasl.mechanism }}
{{- end }}
{{- if .Values.kafka.tls.caSecret }}
{{- $_ := set $kafka "ssl_cafile" (printf "/etc/logsig/kafka-ca/%s" .Values.kafka.tls.caKey) }}
{{- end }}
{{- if .Values.kafka.tls.clientSecret }}
{{- $_ := set $kafka "ssl_certfile" (printf "/etc/logsig/kafka-client/%s" .Values.kafka.tls.certKey) }}
{{- $_ := set $kafka "ssl_keyfile" (printf "/etc/logsig/kafka-client/%s" .Values.kafka.tls.keyKey) }}
{{- end }}
{{- $paths := list }}
{{- range (include "logsig.signatureKeys" . | fromJsonArray) }}
{{- $paths = append $paths (printf "/etc/logsig/signatures/%s" .) }}
{{- end }}
{{- $catalog := dict "builtin" .Values.catalog.builtin "paths" $paths
  "reload_interval_seconds" .Values.catalog.reloadIntervalSeconds }}
{{- $settings := dict "kafka" $kafka "catalog" $catalog
  "http" (dict "host" "0.0.0.0" "port" .Values.service.port)
  "logging" (dict "format" "json" "level" "info")
  "shutdown_timeout_seconds" .Values.shutdownTimeoutSeconds }}
{{- mustMergeOverwrite $settings (deepCopy .Values.settings) | toYaml }}
{{- end }}
