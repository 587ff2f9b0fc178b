#!/usr/bin/env bash
# Writes src/internal/otlpProtos.ts: the OTLP trace definitions of
# opentelemetry-proto (Apache-2.0) at the given tag, comments left out, for
# protobufjs to parse. Usage: scripts/otlp-protos.sh <opentelemetry-proto checkout> [tag]
set -euo pipefail
repo=$1
tag=${2:-v1.9.0}
out=$(dirname "$0")/../src/internal/otlpProtos.ts
{
  echo "/**"
  echo " * The OTLP trace definitions of opentelemetry-proto ${tag} (Apache-2.0,"
  echo " * github.com/open-telemetry/opentelemetry-proto), as published less their"
  echo " * comments and language options; written by scripts/otlp-protos.sh, not by hand."
  echo " */"
  echo ""
  echo "/** The files, each as protobufjs parses it, in dependency order. */"
  echo "export const files: ReadonlyArray<string> = ["
  for f in common/v1/common resource/v1/resource trace/v1/trace collector/trace/v1/trace_service; do
    echo "  // opentelemetry/proto/${f}.proto"
    echo "  \`"
    git -C "$repo" show "${tag}:opentelemetry/proto/${f}.proto" | sed -e 's#[[:space:]]*//.*$##' | grep -v '^[[:space:]]*$' | grep -v '^option '
    echo "\`,"
  done
  echo "]"
} > "$out"
