package dev.soko.driver.http;

import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.SimpleChannelInboundHandler;
import io.grpc.netty.shaded.io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpRequest;
import io.grpc.netty.shaded.io.netty.handler.codec.http.FullHttpResponse;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpHeaderNames;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpHeaderValues;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpMethod;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpResponseStatus;
import io.grpc.netty.shaded.io.netty.handler.codec.http.HttpVersion;
import io.grpc.netty.shaded.io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers one request per connection: routing and refusals on the event loop, the route itself on a
 * call thread (readiness may retry opening a pool, which must not stall the CSI socket's I/O).
 */
final class RouteHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoint.class);

  private final Map<String, HttpEndpoint.Route> paths;
  private final Executor calls;
  private final Map<String, Semaphore> permits;

  /**
   * @param permits per path, how many more answers it may compute at once
   */
  RouteHandler(
      Map<String, HttpEndpoint.Route> paths, Executor calls, Map<String, Semaphore> permits) {
    this.paths = paths;
    this.calls = calls;
    this.permits = permits;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
    boolean head = HttpMethod.HEAD.equals(request.method());
    if (!request.decoderResult().isSuccess()) {
      respond(ctx, head, HttpEndpoint.Reply.text(400, "bad request\n"));
      return;
    }
    String path = new QueryStringDecoder(request.uri()).path();
    HttpEndpoint.Route route = paths.get(path);
    if (route == null) {
      respond(
          ctx,
          head,
          HttpEndpoint.Reply.text(
              404, "not found; try " + String.join(", ", paths.keySet()) + "\n"));
    } else if (!head && !HttpMethod.GET.equals(request.method())) {
      respond(ctx, false, HttpEndpoint.Reply.text(405, "only GET\n"));
    } else if (!permits.get(path).tryAcquire()) {
      respond(ctx, head, HttpEndpoint.Reply.text(503, "busy; try again\n"));
    } else {
      Semaphore held = permits.get(path);
      try {
        calls.execute(() -> respond(ctx, head, answerReleasing(route, held)));
      } catch (RejectedExecutionException e) {
        held.release();
        respond(ctx, head, HttpEndpoint.Reply.text(503, "busy; try again\n"));
      }
    }
  }

  private static HttpEndpoint.Reply answerReleasing(HttpEndpoint.Route route, Semaphore held) {
    try {
      return route.answer();
    } catch (RuntimeException e) {
      LOG.error("HTTP endpoint failed", e);
      return HttpEndpoint.Reply.text(
          500, "internal error in the Soko driver; see the driver log\n");
    } finally {
      held.release();
    }
  }

  private static void respond(ChannelHandlerContext ctx, boolean head, HttpEndpoint.Reply reply) {
    byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            HttpResponseStatus.valueOf(reply.code()),
            head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body));
    response
        .headers()
        .set(HttpHeaderNames.CONTENT_TYPE, reply.contentType())
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
        .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // A read timeout or a client that went away: nothing to answer.
    ctx.close();
  }
}
