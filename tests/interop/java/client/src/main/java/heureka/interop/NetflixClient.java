/*
 * NetflixClient: the Netflix DiscoveryClient (eureka-client 2.0 with its
 * Jersey 3 transport) on its own, no Spring, pointed at heurekad by run.sh.
 *
 * It registers itself (app JAVAWATCH), renews every second and fetches the
 * registry every second with deltas on. After every fetch it writes its local
 * registry to the file named by -Ddump as normalised JSON lines (one per
 * instance, sorted, then one "hash" line), replacing the file atomically, so
 * that run.sh can compare it with heurekad's own full fetch.
 *
 * The codec comes from the real client config keys, given as -D properties:
 *	eureka.encoderName, eureka.decoderName   codec names (CodecWrappers)
 *	eureka.clientDataAccept                  full or compact
 *	eureka.serviceUrl.default                comma-separated server URLs
 * -Dwire=xml adds a request filter that asks for and sends
 * application/xml, so the client's XML codec (XStreamXml) is the one used
 * on the wire; the stock transport always asks for JSON.
 * -Dgzip=false stops asking for gzip (Accept-Encoding), on by default.
 * Stdin: "quit" shuts the client down (which cancels its lease).
 */
package heureka.interop;

import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.appinfo.MyDataCenterInstanceConfig;
import com.netflix.appinfo.providers.EurekaConfigBasedInstanceInfoProvider;
import com.netflix.discovery.CacheRefreshedEvent;
import com.netflix.discovery.DefaultEurekaClientConfig;
import com.netflix.discovery.DiscoveryClient;
import com.netflix.discovery.Jersey3DiscoveryClientOptionalArgs;
import com.netflix.discovery.shared.Application;
import com.netflix.discovery.shared.Applications;
import com.netflix.discovery.shared.resolver.EndpointRandomizer;
import com.netflix.discovery.shared.resolver.EurekaEndpoint;
import com.netflix.discovery.shared.transport.jersey3.Jersey3TransportClientFactories;

import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;
import jakarta.ws.rs.client.ClientResponseContext;
import jakarta.ws.rs.client.ClientResponseFilter;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

public final class NetflixClient {
	private static final AtomicLong FETCHES = new AtomicLong();
	private static final boolean GZIP =
	    !"false".equals(System.getProperty("gzip"));
	private static final boolean COMPACT =
	    "compact".equals(System.getProperty("eureka.clientDataAccept"));

	private NetflixClient() {
	}

	/* The client config: the usual defaults, the keys above from -D. */
	static final class ClientConfig extends DefaultEurekaClientConfig {
		private static String prop(String k, String dflt) {
			return System.getProperty(k, dflt);
		}

		@Override
		public int getRegistryFetchIntervalSeconds() {
			return 1;
		}

		@Override
		public int getInstanceInfoReplicationIntervalSeconds() {
			return 1;
		}

		@Override
		public int getInitialInstanceInfoReplicationIntervalSeconds() {
			return 0;
		}

		@Override
		public int getEurekaServiceUrlPollIntervalSeconds() {
			return 1;
		}

		@Override
		public boolean shouldDisableDelta() {
			return Boolean.parseBoolean(prop("eureka.disableDelta", "false"));
		}

		@Override
		public String getEncoderName() {
			return prop("eureka.encoderName", null);
		}

		@Override
		public String getDecoderName() {
			return prop("eureka.decoderName", null);
		}

		@Override
		public String getClientDataAccept() {
			return prop("eureka.clientDataAccept", "full");
		}

		@Override
		public boolean shouldGZipContent() {
			return true;
		}

		@Override
		public boolean shouldRegisterWithEureka() {
			return true;
		}

		@Override
		public boolean shouldFetchRegistry() {
			return true;
		}

		@Override
		public int getEurekaServerConnectTimeoutSeconds() {
			return 1;
		}

		@Override
		public int getEurekaServerReadTimeoutSeconds() {
			return 2;
		}

		@Override
		public int getHeartbeatExecutorExponentialBackOffBound() {
			return 1;
		}

		@Override
		public int getCacheRefreshExecutorExponentialBackOffBound() {
			return 1;
		}

		@Override
		public List<String> getEurekaServerServiceUrls(String zone) {
			return Arrays.asList(prop("eureka.serviceUrl.default", "").split(","));
		}
	}

	/* This instance: JAVAWATCH on 127.0.0.1, 1 s renewals. */
	static final class InstanceConfig extends MyDataCenterInstanceConfig {
		@Override
		public String getAppname() {
			return System.getProperty("app", "JAVAWATCH");
		}

		@Override
		public String getInstanceId() {
			return System.getProperty("instance", "javawatch-1");
		}

		@Override
		public String getHostName(boolean refresh) {
			return "localhost";
		}

		@Override
		public String getIpAddress() {
			return "127.0.0.1";
		}

		@Override
		public int getNonSecurePort() {
			return 18080;
		}

		@Override
		public int getLeaseRenewalIntervalInSeconds() {
			return 1;
		}

		@Override
		public int getLeaseExpirationDurationInSeconds() {
			return 10;
		}

		@Override
		public String getVirtualHostName() {
			return "javawatch";
		}

		@Override
		public Map<String, String> getMetadataMap() {
			return Collections.singletonMap("codec", System.getProperty("mode", "json"));
		}
	}

	/* Asks for gzip (unless -Dgzip=false), watches the registry fetches'
	 * responses (media type, encoding) and, with -Dwire=xml, sends and asks
	 * for XML instead of JSON. */
	static final class Wire implements ClientRequestFilter, ClientResponseFilter {
		static volatile String last = "none";
		private final boolean xml;

		Wire(boolean xml) {
			this.xml = xml;
		}

		@Override
		public void filter(ClientRequestContext ctx) {
			/* The transport's own acceptEncoding("gzip") does not reach
			 * the wire here; its GZipEncoder inflates what comes back. */
			if (GZIP && ctx.getMethod().equals("GET"))
				ctx.getHeaders().putSingle(HttpHeaders.ACCEPT_ENCODING, "gzip");
			if (!xml)
				return;
			ctx.getHeaders().putSingle(HttpHeaders.ACCEPT, MediaType.APPLICATION_XML);
			if (ctx.hasEntity())
				ctx.setEntity(ctx.getEntity(), ctx.getEntityAnnotations(),
				    MediaType.APPLICATION_XML_TYPE);
		}

		@Override
		public void filter(ClientRequestContext req, ClientResponseContext resp) {
			String path = req.getUri().getPath();
			if (req.getMethod().equals("GET") && path.matches(".*/apps/(delta)?$")) {
				String enc = resp.getHeaderString("Content-Encoding");
				last = (path.endsWith("delta") ? "delta " : "full ") +
				    resp.getMediaType() + " " + (enc == null ? "identity" : enc);
			}
		}
	}

	/* JSON string literal of s. */
	private static String js(String s) {
		if (s == null)
			return "null";
		StringBuilder b = new StringBuilder("\"");
		for (char c : s.toCharArray()) {
			if (c == '"' || c == '\\')
				b.append('\\').append(c);
			else if (c < 0x20)
				b.append(String.format("\\u%04x", (int)c));
			else
				b.append(c);
		}
		return b.append('"').toString();
	}

	/* One normalised line per instance, the same fields run.sh takes from
	 * heurekad's full fetch. */
	static List<String> lines(Applications apps) {
		List<String> out = new ArrayList<>();
		for (Application a : apps.getRegisteredApplications()) {
			for (InstanceInfo i : a.getInstancesAsIsFromEureka()) {
				StringBuilder b = new StringBuilder();
				b.append("{\"app\":").append(js(a.getName()));
				b.append(",\"id\":").append(js(i.getId()));
				b.append(",\"status\":").append(js(String.valueOf(i.getStatus())));
				b.append(",\"ip\":").append(js(i.getIPAddr()));
				b.append(",\"port\":").append(i.getPort());
				if (COMPACT) {
					/* The compact codec carries none of these. */
					out.add(b.append('}').toString());
					continue;
				}
				b.append(",\"overridden\":").append(js(String.valueOf(i.getOverriddenStatus())));
				b.append(",\"dirty\":").append(i.getLastDirtyTimestamp());
				b.append(",\"metadata\":{");
				boolean first = true;
				for (Map.Entry<String, String> e : new TreeMap<>(i.getMetadata()).entrySet()) {
					if (!first)
						b.append(',');
					first = false;
					b.append(js(e.getKey())).append(':').append(js(e.getValue()));
				}
				b.append("}}");
				out.add(b.toString());
			}
		}
		Collections.sort(out);
		out.add("hash " + apps.getReconcileHashCode());
		return out;
	}

	/* Write the local registry to the dump file, atomically. */
	private static void dump(DiscoveryClient client, Path file) {
		try {
			List<String> l = lines(client.getApplications());
			l.add("fetches " + FETCHES.get());
			l.add("wire " + Wire.last);
			Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
			Files.write(tmp, l, StandardCharsets.UTF_8);
			Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE,
			    StandardCopyOption.REPLACE_EXISTING);
		} catch (Exception e) {
			System.err.println("NetflixClient: dump failed: " + e);
		}
	}

	public static void main(String[] args) throws Exception {
		Path file = Path.of(System.getProperty("dump", "registry.txt"));
		InstanceConfig ic = new InstanceConfig();
		InstanceInfo info = new EurekaConfigBasedInstanceInfoProvider(ic).get();
		ApplicationInfoManager aim = new ApplicationInfoManager(ic, info);
		Jersey3DiscoveryClientOptionalArgs opt = new Jersey3DiscoveryClientOptionalArgs();
		opt.setAdditionalFilters(Collections.singletonList(
		    new Wire("xml".equals(System.getProperty("wire")))));
		aim.setInstanceStatus(InstanceInfo.InstanceStatus.UP);
		DiscoveryClient[] holder = new DiscoveryClient[1];
		opt.setEventListeners(Collections.singleton(ev -> {
			if (ev instanceof CacheRefreshedEvent && holder[0] != null) {
				FETCHES.incrementAndGet();
				dump(holder[0], file);
			}
		}));
		/* Keep the configured order of the server URLs (the default
		 * randomizer shuffles them), so "the first" is the one used. */
		EndpointRandomizer inOrder = new EndpointRandomizer() {
			@Override
			public <T extends EurekaEndpoint> List<T> randomize(List<T> list) {
				return list;
			}
		};
		DiscoveryClient client = new DiscoveryClient(aim, new ClientConfig(),
		    Jersey3TransportClientFactories.getInstance(), opt, inOrder);
		holder[0] = client;
		dump(client, file);
		System.out.println("NetflixClient: started " + info.getAppName() + "/" + info.getId());
		System.out.flush();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null && !line.trim().equals("quit"))
			;
		client.shutdown();
		System.out.println("NetflixClient: shut down");
		System.exit(0);
	}
}
