/*
 * The Spring Cloud Eureka server heureka's interop test runs beside two
 * heurekad as a peer. Everything that matters is set by properties on the
 * command line (see application.properties and run.sh).
 */
package heureka.interop.server;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.eureka.server.EnableEurekaServer;

/** Starts the Eureka server. */
@SpringBootApplication
@EnableEurekaServer
public class EurekaServerApp {
	/** Entry point. */
	public static void main(String[] args) {
		SpringApplication.run(EurekaServerApp.class, args);
	}
}
