# Dockerfile: heurekad in a small Debian image.
#
#   docker build -t heureka .
#   docker run -p 8761:8761 heureka
#   docker run -p 8761:8761 -e EUREKA_SERVER_ENABLESELFPRESERVATION=false heureka
#
# Configuration is by environment variable with Spring's relaxed binding
# (SERVER_PORT, EUREKA_CLIENT_SERVICEURL_DEFAULTZONE, EUREKA_SERVER_*, ...),
# or mount a file and set HEUREKAD_ARGS="-c /etc/heureka/heurekad.yml".
# The build stage has the compilers and -dev packages; the runtime stage
# only the shared libraries, and runs as an unprivileged user.

FROM debian:bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	gcc make autoconf automake libtool pkg-config libc6-dev \
	libevent-dev libyajl-dev libssl-dev libexpat1-dev zlib1g-dev \
	libyaml-dev \
 && rm -rf /var/lib/apt/lists/*
COPY . /src
WORKDIR /build
RUN cd /src && autoreconf -fi \
 && cd /build && /src/configure --prefix=/usr --sysconfdir=/etc \
	--disable-silent-rules \
 && make -j"$(nproc)" \
 && make install DESTDIR=/out \
 && rm -rf /out/usr/include /out/usr/lib/pkgconfig \
	/out/usr/lib/*/pkgconfig /out/usr/share/man

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	libevent-2.1-7 libevent-openssl-2.1-7 libevent-pthreads-2.1-7 \
	libyajl2 libssl3 libexpat1 zlib1g libyaml-0-2 \
	ca-certificates curl tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system heureka \
 && useradd --system --gid heureka --home-dir /nonexistent \
	--shell /usr/sbin/nologin heureka
COPY --from=build /out/ /
RUN ldconfig && heurekad --version

ENV SERVER_PORT=8761 \
    HEUREKAD_ARGS=""
USER heureka:heureka
EXPOSE 8761
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
	CMD curl -fsS "http://127.0.0.1:${SERVER_PORT}/health" || exit 1
STOPSIGNAL SIGTERM
# tini reaps zombies and forwards SIGTERM, so heurekad shuts down cleanly.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["/bin/sh", "-c", "exec /usr/sbin/heurekad $HEUREKAD_ARGS"]
