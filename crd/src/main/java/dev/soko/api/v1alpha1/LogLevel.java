package dev.soko.api.v1alpha1;

/** Log levels the driver's --log-level flag accepts. */
public enum LogLevel {
  error,
  warn,
  info,
  debug,
  trace
}
