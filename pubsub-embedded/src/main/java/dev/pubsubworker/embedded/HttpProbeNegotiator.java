package dev.pubsubworker.embedded;

import io.grpc.netty.shaded.io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.shaded.io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.shaded.io.netty.buffer.ByteBuf;
import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.channel.ChannelFutureListener;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.handler.codec.ByteToMessageDecoder;
import io.grpc.netty.shaded.io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Plaintext gRPC, plus the one HTTP/1.1 answer Google's emulator gives: {@code GET /} (or {@code
 * HEAD /}) is answered {@code 200 Ok} and the connection closed, so readiness probes written for
 * the emulator ({@code curl http://HOST:PORT/}) work against this server too. A connection whose
 * first bytes are anything else (gRPC's HTTP/2 preface) goes to gRPC untouched.
 */
final class HttpProbeNegotiator implements InternalProtocolNegotiator.ProtocolNegotiator {

  private static final byte[] OK =
      ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: close\r\n"
              + "\r\nOk\n")
          .getBytes(StandardCharsets.US_ASCII);

  private final InternalProtocolNegotiator.ProtocolNegotiator plaintext =
      InternalProtocolNegotiators.serverPlaintext();

  @Override
  public AsciiString scheme() {
    return plaintext.scheme();
  }

  @Override
  public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
    return new FirstBytes(plaintext.newHandler(grpcHandler));
  }

  @Override
  public void close() {
    plaintext.close();
  }

  /**
   * Looks at a connection's first four bytes, then answers the probe or steps aside for gRPC.
   * gRPC's own negotiation handler joins the pipeline only then, so the events meant for it (gRPC's
   * protocol negotiation event) are held until it is there.
   */
  private static final class FirstBytes extends ByteToMessageDecoder {
    private final ChannelHandler grpc;
    private final List<Object> heldEvents = new ArrayList<>();
    private boolean decided;

    FirstBytes(ChannelHandler grpc) {
      this.grpc = grpc;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
      if (decided) {
        super.userEventTriggered(ctx, event);
      } else {
        heldEvents.add(event);
      }
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      if (decided || in.readableBytes() < 4) {
        return;
      }
      decided = true;
      String start = in.toString(in.readerIndex(), 4, StandardCharsets.US_ASCII);
      if (start.equals("GET ") || start.equals("HEAD")) {
        in.skipBytes(in.readableBytes());
        heldEvents.clear();
        ctx.writeAndFlush(Unpooled.wrappedBuffer(OK)).addListener(ChannelFutureListener.CLOSE);
        return;
      }
      ctx.pipeline().addAfter(ctx.name(), null, grpc);
      for (Object event : heldEvents) {
        ctx.fireUserEventTriggered(event);
      }
      heldEvents.clear();
      // Removing this decoder hands the bytes read so far on to gRPC.
      ctx.pipeline().remove(this);
    }
  }
}
