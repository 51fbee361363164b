#!/bin/sh
# Starts Redis for Kibitz: one ACL user ($REDIS_USER, default "kibitz") with
# the password $REDIS_PASSWORD, limited to Kibitz's keys and channels
# (kibitz:*) and to commands that are not @dangerous (no FLUSHALL, CONFIG,
# DEBUG, MODULE, REPLICAOF, KEYS, INFO ...); the default user is off, so a
# connection without the password can do nothing. The ACL reaches Redis on
# its standard input ("redis-server -"), never on its command line, where
# ps would show it. The other arguments are redis-server's.
set -eu
user=${REDIS_USER:-kibitz}
if [ -z "${REDIS_PASSWORD:-}" ]; then
  echo "start-redis: REDIS_PASSWORD is not set: the password of the Redis user '$user' (e.g. openssl rand -hex 32)" >&2
  exit 2
fi
# Redis reads the ACL line as words: no spaces, quotes or backslashes.
case "$REDIS_PASSWORD$user" in
  *[!A-Za-z0-9._~+/=-]*)
    echo "start-redis: REDIS_PASSWORD and REDIS_USER may hold only A-Z a-z 0-9 . _ ~ + / = - (e.g. openssl rand -hex 32)" >&2
    exit 2 ;;
esac
if [ "${#REDIS_PASSWORD}" -lt 16 ]; then
  echo "start-redis: REDIS_PASSWORD is shorter than 16 characters (e.g. openssl rand -hex 32)" >&2
  exit 2
fi
# dash passes a here-document through a pipe: nothing is written to disk.
exec redis-server - "$@" <<ACL
user default off
user $user on >$REDIS_PASSWORD ~kibitz:* &kibitz:* +@all -@dangerous
ACL
