package dev.soko.driver.csi;

import io.grpc.stub.StreamObserver;

/** Unary answers; exceptions are left to the server interceptor, which owns status mapping. */
final class Replies {
  private Replies() {}

  static <T> void reply(StreamObserver<T> observer, T response) {
    observer.onNext(response);
    observer.onCompleted();
  }
}
