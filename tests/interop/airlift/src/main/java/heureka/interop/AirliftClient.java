/*
 * AirliftClient: airlift's discovery client (io.airlift:discovery, what
 * Trino uses) against heurekad, for run.sh.
 *
 *   announce URLS NODE TYPE HTTP   an Announcer with the real
 *                                  HttpDiscoveryAnnouncementClient announces
 *                                  one service of TYPE (property http=HTTP),
 *                                  prints "ANNOUNCED" once heurekad took it,
 *                                  then keeps re-announcing until SIGTERM,
 *                                  whose shutdown hook calls destroy()
 *                                  (which unannounces)
 *   lookup URLS NODE TYPE N SECS [HOLD]
 *                                  HttpDiscoveryLookupClient: getServices,
 *                                  then refreshServices with the ETag it got,
 *                                  until TYPE has exactly N services, then
 *                                  (HOLD > 0) keeps refreshing for HOLD
 *                                  seconds, each answer still N; exit 0, or
 *                                  1 after SECS seconds or a changed answer
 *
 * URLS is a comma-separated list of heurekad base URLs; the discovery URI
 * supplier hands out the first that accepts a TCP connection, so a killed
 * peer is skipped as a load balancer in front of the cluster would.
 */
package heureka.interop;

import io.airlift.discovery.client.Announcement;
import io.airlift.discovery.client.Announcer;
import io.airlift.discovery.client.HttpDiscoveryAnnouncementClient;
import io.airlift.discovery.client.HttpDiscoveryLookupClient;
import io.airlift.discovery.client.ServiceAnnouncement;
import io.airlift.discovery.client.ServiceDescriptor;
import io.airlift.discovery.client.ServiceDescriptors;
import io.airlift.discovery.client.ServiceDescriptorsRepresentation;
import io.airlift.http.client.HttpClientConfig;
import io.airlift.http.client.jetty.JettyHttpClient;
import io.airlift.json.JsonCodec;
import io.airlift.node.NodeConfig;
import io.airlift.node.NodeInfo;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

public final class AirliftClient
{
    private AirliftClient() {}

    /* The first URI that accepts a connection (else the first). */
    static Supplier<URI> discoveryUris(String list)
    {
        List<URI> uris = new ArrayList<>();
        for (String u : list.split(",")) {
            uris.add(URI.create(u.replaceAll("/+$", "")));
        }
        return () -> {
            for (URI u : uris) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(u.getHost(), u.getPort()), 300);
                    return u;
                }
                catch (Exception e) {
                    // try the next one
                }
            }
            return uris.get(0);
        };
    }

    static NodeInfo node(String nodeId)
    {
        return new NodeInfo(new NodeConfig()
                .setEnvironment("test")
                .setPool("general")
                .setNodeId(nodeId));
    }

    public static void main(String[] args)
            throws Exception
    {
        if (args.length >= 5 && args[0].equals("announce")) {
            announce(args[1], args[2], args[3], args[4]);
        }
        else if (args.length >= 6 && args[0].equals("lookup")) {
            int hold = args.length > 6 ? Integer.parseInt(args[6]) : 0;
            System.exit(lookup(args[1], args[2], args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]), hold));
        }
        else {
            System.err.println("usage: announce URLS NODE TYPE HTTP | lookup URLS NODE TYPE N SECS");
            System.exit(2);
        }
    }

    static void announce(String urls, String nodeId, String type, String http)
            throws Exception
    {
        JettyHttpClient http1 = new JettyHttpClient(new HttpClientConfig());
        HttpDiscoveryAnnouncementClient client = new HttpDiscoveryAnnouncementClient(
                discoveryUris(urls), node(nodeId), JsonCodec.jsonCodec(Announcement.class), http1);
        ServiceAnnouncement svc = ServiceAnnouncement.serviceAnnouncement(type)
                .addProperty("http", http)
                .build();
        Announcer announcer = new Announcer(client, Set.of(svc));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            announcer.destroy();
            System.out.println("UNANNOUNCED");
            System.out.flush();
        }));
        announcer.start();
        announcer.forceAnnounce().get(30, TimeUnit.SECONDS);
        System.out.println("ANNOUNCED " + svc.getId());
        System.out.flush();
        Thread.currentThread().join();
    }

    static int lookup(String urls, String nodeId, String type, int want, int secs, int hold)
            throws Exception
    {
        JettyHttpClient http = new JettyHttpClient(new HttpClientConfig());
        HttpDiscoveryLookupClient client = new HttpDiscoveryLookupClient(
                discoveryUris(urls), node(nodeId), JsonCodec.jsonCodec(ServiceDescriptorsRepresentation.class), http);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        ServiceDescriptors last = null;
        int refreshes = 0;
        int got = -1;
        while (System.nanoTime() < deadline) {
            try {
                last = last == null
                        ? client.getServices(type).get(10, TimeUnit.SECONDS)
                        : client.refreshServices(last).get(10, TimeUnit.SECONDS);
                refreshes++;
                got = last.getServiceDescriptors().size();
                if (got == want) {
                    for (ServiceDescriptor d : last.getServiceDescriptors()) {
                        System.out.println("SERVICE " + d.getNodeId() + " " + d.getId() + " " + d.getType() + " " + d.getPool() + " " + d.getProperties());
                    }
                    System.out.println("FOUND " + got + " after " + refreshes + " lookups, etag " + last.getETag() + ", max-age " + last.getMaxAge());
                    int rc = hold(client, last, want, hold);
                    http.close();
                    return rc;
                }
            }
            catch (Exception e) {
                System.out.println("lookup failed: " + e);
                last = null;
            }
            Thread.sleep(200);
        }
        System.out.println("TIMEOUT: " + type + " has " + got + " services, wanted " + want);
        http.close();
        return 1;
    }

    /* Keep refreshing for secs seconds; 1 as soon as the count differs. */
    static int hold(HttpDiscoveryLookupClient client, ServiceDescriptors last, int want, int secs)
            throws Exception
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(secs);
        int refreshes = 0;
        int failures = 0;
        while (System.nanoTime() < deadline) {
            Thread.sleep(200);
            try {
                last = client.refreshServices(last).get(10, TimeUnit.SECONDS);
            }
            catch (Exception e) {
                // a killed peer: the supplier moves on at the next call
                failures++;
                System.out.println("refresh failed: " + e);
                continue;
            }
            refreshes++;
            int got = last.getServiceDescriptors().size();
            if (got != want) {
                System.out.println("CHANGED: " + got + " services after " + refreshes + " refreshes, wanted " + want);
                return 1;
            }
        }
        System.out.println("HELD " + want + " for " + secs + " s over " + refreshes + " refreshes (" + failures + " failed)");
        return 0;
    }
}
