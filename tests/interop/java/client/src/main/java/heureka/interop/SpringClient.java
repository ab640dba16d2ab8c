/*
 * SpringClient: a Spring Boot service with
 * spring-cloud-starter-netflix-eureka-client, configured the way a Spring
 * user does it (properties, given by run.sh on the command line), with
 * eureka.client.healthcheck.enabled so that its health decides its status.
 *
 * Commands on stdin, one a line (run.sh checks their effect on heurekad):
 *	down | up            flip the health indicator "switch"; the client's
 *	                     health check turns the instance DOWN or UP and the
 *	                     replicator re-registers it (the dirty flag)
 *	meta KEY VALUE       ApplicationInfoManager.registerAppMetadata
 *	discover SERVICE     print "DISCOVER SERVICE id,id,..." as seen by
 *	                     DiscoveryClient.getInstances (sorted ids)
 *	quit                 close the application context (graceful shutdown:
 *	                     the client cancels its lease)
 */
package heureka.interop;

import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.discovery.AbstractDiscoveryClientOptionalArgs;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

@SpringBootApplication
public class SpringClient {
	private static volatile boolean healthy = true;

	/* The health indicator the "down" and "up" commands flip. */
	@Bean
	public HealthIndicator switchHealthIndicator() {
		return () -> healthy ? Health.up().build() : Health.down().withDetail("switch", "off").build();
	}

	public static void main(String[] args) throws Exception {
		ConfigurableApplicationContext ctx = SpringApplication.run(SpringClient.class, args);
		DiscoveryClient dc = ctx.getBean(DiscoveryClient.class);
		ApplicationInfoManager aim = ctx.getBean(ApplicationInfoManager.class);
		/* Which HTTP transport Spring Cloud picked (RestTemplate, RestClient,
		 * WebClient or Jersey), for the log. */
		String transport = ctx.getBeanProvider(AbstractDiscoveryClientOptionalArgs.class)
		    .stream().map(a -> a.getClass().getSimpleName()).collect(Collectors.joining(","));
		System.out.println("SPRINGCLIENT started " + dc.description() + " transport " + transport);
		System.out.flush();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null) {
			String[] w = line.trim().split("\\s+");
			if (w[0].equals("quit"))
				break;
			switch (w[0]) {
			case "down":
				healthy = false;
				break;
			case "up":
				healthy = true;
				break;
			case "meta":
				aim.registerAppMetadata(Collections.singletonMap(w[1], w[2]));
				break;
			case "discover": {
				List<ServiceInstance> l = dc.getInstances(w[1]);
				String ids = l.stream().map(ServiceInstance::getInstanceId).sorted()
				    .collect(Collectors.joining(","));
				System.out.println("DISCOVER " + w[1] + " " + ids);
				break;
			}
			default:
				System.out.println("SPRINGCLIENT unknown command " + w[0]);
			}
			System.out.println("SPRINGCLIENT done " + line.trim());
			System.out.flush();
		}
		int rc = SpringApplication.exit(ctx);
		System.out.println("SPRINGCLIENT exited " + rc);
		System.out.flush();
		System.exit(rc);
	}
}
