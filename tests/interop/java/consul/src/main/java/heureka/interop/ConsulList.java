/*
 * ConsulList: what a Spring Cloud Consul discovery client reads from
 * heurekad's Consul catalog and health API (run.sh beside this file).
 *
 * A Spring Boot program without a web server: spring-cloud-starter-consul-
 * discovery with registration and Consul config turned off (read-only, see
 * application.properties), pointed by run.sh at heurekad with
 * spring.cloud.consul.host/port. It prints, one line each, sorted so that
 * run.sh can compare text:
 *
 *	SERVICES a,b,...                  DiscoveryClient.getServices()
 *	INSTANCE app id=.. host=.. port=.. secure=.. tags=[..] meta={..}
 *	                                  getInstances(app) for each app named
 *	                                  in heureka.apps (comma separated)
 *	COUNT app N                       how many instances getInstances gave
 *	DONE
 *
 * With heureka.watch-ms > 0 it then follows Spring Cloud Consul's catalog
 * watch (ConsulCatalogWatch: blocking queries on /v1/catalog/services with
 * ?index=, each answer published as a HeartbeatEvent carrying the
 * X-Consul-Index), all within that many milliseconds:
 *
 *	WATCHING index=N                  the first event came; change now
 *	CHANGED index=M                   an event with another index came
 *	AFTER INSTANCE ... / AFTER COUNT  getInstances(app) again, each app
 *	WATCH-DONE                        (WATCH-TIMEOUT and exit 1 instead
 *	                                  when the time ran out)
 *
 * then closes its context and exits 0 (1 when a call threw).
 */
package heureka.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.consul.discovery.ConsulServiceInstance;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.EventListener;

@SpringBootApplication
public class ConsulList implements CommandLineRunner {
	private final DiscoveryClient discovery;
	private final String apps;
	private final long watchMs;
	/* The catalog watch's indexes, as its events bring them (bounded). */
	private final LinkedBlockingQueue<String> beats =
	    new LinkedBlockingQueue<>(1024);
	private volatile int status;

	/* Spring hands in the Consul discovery client and the properties. */
	public ConsulList(DiscoveryClient discovery,
	    @Value("${heureka.apps:}") String apps,
	    @Value("${heureka.watch-ms:0}") long watchMs) {
		this.discovery = discovery;
		this.apps = apps;
		this.watchMs = watchMs;
	}

	/* Keep the index of each catalog watch answer (dropped when full). */
	@EventListener
	public void onHeartbeat(HeartbeatEvent e) {
		beats.offer(String.valueOf(e.getValue()));
	}

	/* Run, close the context, exit with the status run() left. */
	public static void main(String[] args) {
		ConfigurableApplicationContext ctx =
		    SpringApplication.run(ConsulList.class, args);
		int rc = ctx.getBean(ConsulList.class).status;
		ctx.close();
		System.exit(rc);
	}

	/* Print the services, then each named app's instances. */
	@Override
	public void run(String... args) {
		try {
			System.out.println("CLIENT " + discovery.getClass().getName());
			List<String> services = new ArrayList<>(discovery.getServices());
			services.sort(null);
			System.out.println("SERVICES " + String.join(",", services));
			listApps("");
			System.out.println("DONE");
			System.out.flush();
			if (watchMs > 0)
				watch();
		} catch (RuntimeException | InterruptedException e) {
			System.out.println("ERROR " + e);
			e.printStackTrace(System.out);
			status = 1;
		}
		System.out.flush();
	}

	/* List the instances of every app in heureka.apps, lines prefixed. */
	private void listApps(String prefix) {
		for (String app : apps.split(",")) {
			if (!app.isBlank())
				list(prefix, app.trim());
		}
	}

	/* Await a catalog change the watch sees, then list again. */
	private void watch() throws InterruptedException {
		long end = System.nanoTime() + watchMs * 1000000L;
		String first = beats.poll(left(end), TimeUnit.NANOSECONDS);
		if (first != null) {
			System.out.println("WATCHING index=" + first);
			System.out.flush();
			String b;
			while ((b = beats.poll(left(end), TimeUnit.NANOSECONDS)) != null) {
				if (!b.equals(first)) {
					System.out.println("CHANGED index=" + b);
					listApps("AFTER ");
					System.out.println("WATCH-DONE");
					return;
				}
			}
		}
		System.out.println("WATCH-TIMEOUT");
		status = 1;
	}

	/* Nanoseconds until END, at least 0. */
	private static long left(long end) {
		return Math.max(0, end - System.nanoTime());
	}

	/* Print the instances getInstances(app) returns, sorted by id. */
	private void list(String prefix, String app) {
		List<ServiceInstance> list = new ArrayList<>(discovery.getInstances(app));
		list.sort((a, b) -> String.valueOf(a.getInstanceId())
		    .compareTo(String.valueOf(b.getInstanceId())));
		for (ServiceInstance si : list) {
			String tags = "-";
			if (si instanceof ConsulServiceInstance csi)
				tags = String.valueOf(csi.getTags());
			Map<String, String> meta = new TreeMap<>(si.getMetadata());
			System.out.println(prefix + "INSTANCE " + app + " id=" + si.getInstanceId()
			    + " service=" + si.getServiceId() + " host=" + si.getHost()
			    + " port=" + si.getPort() + " secure=" + si.isSecure()
			    + " uri=" + si.getUri() + " tags=" + tags + " meta=" + meta);
		}
		System.out.println(prefix + "COUNT " + app + " " + list.size());
	}
}
