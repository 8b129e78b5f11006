package dev.soko.driver.metrics;

/** Where the server reports each finished RPC. */
public interface RpcMetrics {
  /** Used when the metrics endpoint is disabled: records nothing and loads no metrics library. */
  RpcMetrics NONE = (method, code, nanos) -> {};

  /**
   * @param method the short CSI method name, e.g. {@code CreateVolume}
   * @param code the gRPC status code name, e.g. {@code OK}
   */
  void record(String method, String code, long nanos);
}
