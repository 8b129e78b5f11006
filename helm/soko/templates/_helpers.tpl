{{/* Names and labels shared by every template. */}}

{{- define "soko.fullname" -}}
{{- printf "%s-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "soko.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "soko.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Selector labels: stable across upgrades (a Deployment selector is immutable). */}}
{{- define "soko.selectorLabels" -}}
app.kubernetes.io/name: soko-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "soko.labels" -}}
{{ include "soko.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "soko.image" -}}
{{- $repo := .Values.image.repository -}}
{{- with .Values.image.registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}{{ end -}}
{{- printf "%s:%s" $repo (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
"true" when the operator upgrades Soko's CRDs (crds.upgrade). A release installed before the key
existed, upgraded with --reuse-values, has no crds in its values: on, as for a new install.
*/}}
{{- define "soko.upgradeCrds" -}}
{{- if dig "crds" "upgrade" true .Values.AsMap -}}true{{- end -}}
{{- end -}}
