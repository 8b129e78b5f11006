package dev.soko.driver.kube;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The few requests the driver makes to the Kubernetes API server, over the JDK's HTTP client with
 * the pod's service-account token and the cluster CA: no Kubernetes client library (the driver's
 * memory is one of its targets). The token is read for every request, as projected tokens rotate.
 */
public final class KubeApi {
  static final String SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount/";
  public static final Duration TIMEOUT = Duration.ofSeconds(10);

  /** An answer: the HTTP status and the body (kept short for logs). */
  public record Response(int status, String body) {
    public boolean ok() {
      return status >= 200 && status < 300;
    }
  }

  private final URI server;
  private final Path tokenFile;
  private final HttpClient http;

  KubeApi(URI server, Path tokenFile, Optional<Path> caFile) throws IOException {
    this.server = server;
    this.tokenFile = tokenFile;
    HttpClient.Builder builder = HttpClient.newBuilder().connectTimeout(TIMEOUT);
    if (caFile.isPresent()) {
      builder.sslContext(trusting(caFile.get()));
    }
    this.http = builder.build();
  }

  /**
   * The API server this pod may talk to, from the environment; empty when the driver does not run
   * in a cluster (no token file) or {@code SOKO_POOL_REPORT=off}. Overrides, for tests and runs
   * outside a pod: {@code SOKO_KUBE_API} (URL), {@code SOKO_KUBE_TOKEN_FILE}, {@code
   * SOKO_KUBE_CA_FILE}. Without them: {@code https://$KUBERNETES_SERVICE_HOST:$..._PORT} and the
   * service-account token and CA.
   */
  public static Optional<KubeApi> fromEnvironment(Map<String, String> env) throws IOException {
    if ("off".equalsIgnoreCase(env.getOrDefault("SOKO_POOL_REPORT", ""))) {
      return Optional.empty();
    }
    Path token = Path.of(env.getOrDefault("SOKO_KUBE_TOKEN_FILE", SERVICE_ACCOUNT + "token"));
    String url = env.get("SOKO_KUBE_API");
    if (url == null) {
      String host = env.get("KUBERNETES_SERVICE_HOST");
      if (host == null) {
        return Optional.empty();
      }
      String port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
      url = "https://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
    if (!Files.isReadable(token)) {
      return Optional.empty();
    }
    Path ca = Path.of(env.getOrDefault("SOKO_KUBE_CA_FILE", SERVICE_ACCOUNT + "ca.crt"));
    URI server = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    boolean tls = "https".equals(server.getScheme());
    return Optional.of(
        new KubeApi(server, token, tls && Files.exists(ca) ? Optional.of(ca) : Optional.empty()));
  }

  public URI server() {
    return server;
  }

  /** Sends one request with a bounded timeout; a body is JSON (or, for apply, YAML's subset). */
  public Response send(String method, String path, String contentType, String body)
      throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            writeRequest(method, path, contentType, body), HttpResponse.BodyHandlers.ofString());
    String text = response.body() == null ? "" : response.body();
    return new Response(response.statusCode(), text.length() > 512 ? text.substring(0, 512) : text);
  }

  /**
   * As {@link #send}, but the whole answer is kept (up to {@code maxChars}): the object written, to
   * read its generation or status.
   */
  public Response write(String method, String path, String contentType, String body, int maxChars)
      throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            writeRequest(method, path, contentType, body), HttpResponse.BodyHandlers.ofString());
    String text = response.body() == null ? "" : response.body();
    if (text.length() > maxChars) {
      throw new IOException(
          "answer to " + method + " " + path + " is over " + maxChars + " characters");
    }
    return new Response(response.statusCode(), text);
  }

  private HttpRequest writeRequest(String method, String path, String contentType, String body)
      throws IOException {
    return request(path)
        .header("Content-Type", contentType)
        .method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
        .build();
  }

  /** A GET whose whole answer is kept (up to {@code maxChars}): an object to read, not to log. */
  public Response get(String path, int maxChars) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    String text = response.body() == null ? "" : response.body();
    if (text.length() > maxChars) {
      throw new IOException("answer to GET " + path + " is over " + maxChars + " characters");
    }
    return new Response(response.statusCode(), text);
  }

  /**
   * A GET whose answer is a stream of lines (a watch): each line of a 2xx answer goes to {@code
   * lines} as it arrives, until the server ends the stream. Returns the HTTP status. Interrupting
   * the calling thread ends the read with an IOException. {@code TIMEOUT} bounds the wait for the
   * answer's headers only; the caller bounds the stream (the watch's timeoutSeconds).
   */
  public int stream(String path, Consumer<String> lines) throws IOException, InterruptedException {
    HttpResponse<InputStream> response =
        http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      if (response.statusCode() / 100 == 2) {
        String line;
        while ((line = in.readLine()) != null) {
          if (!line.isBlank()) {
            lines.accept(line);
          }
        }
      }
    }
    return response.statusCode();
  }

  private HttpRequest.Builder request(String path) throws IOException {
    return HttpRequest.newBuilder(URI.create(server + path))
        .timeout(TIMEOUT)
        .header("Authorization", "Bearer " + Files.readString(tokenFile).strip())
        .header("Accept", "application/json");
  }

  /** An SSL context that trusts exactly the certificates in a PEM file (the cluster CA). */
  private static SSLContext trusting(Path caFile) throws IOException {
    try (InputStream in = Files.newInputStream(caFile)) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + i++, cert);
      }
      if (i == 0) {
        throw new IOException("no certificate in " + caFile);
      }
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      return context;
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot use the CA file " + caFile + ": " + e.getMessage(), e);
    }
  }
}
