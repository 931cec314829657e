"""The Lua scripts a Redis store runs: the lease and the commit.

The lock key is never written to the append-only file or to replicas
(``redis.set_repl(redis.REPL_NONE)``): it is worth nothing after a restart
(the commit's fence then refuses a holder from before it), and keeping it out
spares every read two fsyncs on a server with ``appendfsync always``.

Each script runs atomically on the server, so a commit's writes (every table
it changes, the manifest, the snapshots of a checkpoint) become visible to
other clients all at once or not at all; Redis's atomicity does the job the
folder store's journal does. Scripts are sent by SHA1 and re-sent whole when
the server does not know them (after a restart).

Keys (``P`` is the prefix ``memwork:``): ``P..meta`` (hash: format,
schema_version, generation, txid), ``P..tables`` (hash: table → version),
``P..t:<table>`` (hash: document id → JSON), ``P..lock`` (the lease),
``P..snaps`` (set of checkpoint snapshot ids), ``P..snap:<id>`` (hash: table →
version) and ``P..snap:<id>:t:<table>`` (the table as it was).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .resp import Arg, Connection, ReplyError

if TYPE_CHECKING:  # _sha1 has no stubs; it has hashlib's sha1 interface
    from hashlib import sha1 as _sha1
else:
    try:  # CPython's own SHA-1: hashlib would load OpenSSL (~5 ms) for four constants
        from _sha1 import sha1 as _sha1
    except ImportError:  # pragma: no cover - other interpreters
        from hashlib import sha1 as _sha1

#: ``SET lock token NX PX lease``, and with it the manifest, in one round trip.
#: KEYS: lock, meta, tables. ARGV: token, lease ms, the generation the caller knows,
#: and the token of a holder known to be dead ("" for none), whose lock is taken over.
#: Returns {0, pttl, holder} when busy, {1, meta} when the caller's manifest is
#: current, {1, meta, tables} otherwise.
ACQUIRE = """
redis.replicate_commands()
redis.set_repl(redis.REPL_NONE)
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[4] then
  return {0, redis.call('PTTL', KEYS[1]), holder}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local meta = redis.call('HGETALL', KEYS[2])
if redis.call('HGET', KEYS[2], 'generation') == ARGV[3] then
  return {1, meta}
end
return {1, meta, redis.call('HGETALL', KEYS[3])}
"""

#: Delete the lock if it still holds our token. Returns 1, or 0 when the lease was lost.
RELEASE = """
redis.replicate_commands()
redis.set_repl(redis.REPL_NONE)
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

#: Extend our lease. Returns 1, or 0 when it was already lost.
RENEW = """
redis.replicate_commands()
redis.set_repl(redis.REPL_NONE)
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

#: The commit. KEYS: lock, meta, tables, snaps. ARGV: token, txid, channel, prefix,
#: generation, schema_version, release ("1": let go of the lock too, sparing a round
#: trip when the commit ends the lock's hold), then operations, each a tag and its
#: arguments:
#:   S id n name…              snapshot the committed tables (before any write below)
#:   I id name version n (docid json)…   a snapshot table given whole (copies)
#:   H name version nset ndel (docid json)… docid…   write a table
#:   D name                    drop a table
#:   E name ms                 expire a table at ms (unix time; 0: never)
#:   X id                      delete a snapshot
#: The lease is checked first (fencing): a writer whose lease ran out and was
#: taken by another process writes nothing.
COMMIT = """
redis.replicate_commands()
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('MEMWORK_LEASE_LOST the store lock lease was lost')
end
local p = ARGV[4]
local function chunked(cmd, key, from, count, width)
  local done = 0
  while done < count do
    local n = math.min(count - done, 256)
    local args = {}
    for k = 0, n * width - 1 do
      args[#args + 1] = ARGV[from + done * width + k]
    end
    redis.call(cmd, key, unpack(args))
    done = done + n
  end
end
local i = 8
while i <= #ARGV do
  local op = ARGV[i]
  if op == 'S' then
    local id = ARGV[i + 1]
    local n = tonumber(ARGV[i + 2])
    local index = p .. 'snap:' .. id
    for k = 1, n do
      local name = ARGV[i + 2 + k]
      local version = redis.call('HGET', KEYS[3], name)
      if version then
        redis.call('HSET', index, name, version)
        local source = p .. 't:' .. name
        if redis.call('EXISTS', source) == 1 then
          redis.call('COPY', source, index .. ':t:' .. name, 'REPLACE')
          redis.call('PERSIST', index .. ':t:' .. name)  -- a checkpoint never expires
        end
      end
    end
    redis.call('SADD', KEYS[4], id)
    i = i + 3 + n
  elseif op == 'I' then
    local index = p .. 'snap:' .. ARGV[i + 1]
    local name = ARGV[i + 2]
    local n = tonumber(ARGV[i + 4])
    redis.call('HSET', index, name, ARGV[i + 3])
    redis.call('DEL', index .. ':t:' .. name)
    chunked('HSET', index .. ':t:' .. name, i + 5, n, 2)
    redis.call('SADD', KEYS[4], ARGV[i + 1])
    i = i + 5 + 2 * n
  elseif op == 'H' then
    local name = ARGV[i + 1]
    local key = p .. 't:' .. name
    local nset = tonumber(ARGV[i + 3])
    local ndel = tonumber(ARGV[i + 4])
    chunked('HSET', key, i + 5, nset, 2)
    chunked('HDEL', key, i + 5 + 2 * nset, ndel, 1)
    redis.call('HSET', KEYS[3], name, ARGV[i + 2])
    i = i + 5 + 2 * nset + ndel
  elseif op == 'D' then
    redis.call('DEL', p .. 't:' .. ARGV[i + 1])
    redis.call('HDEL', KEYS[3], ARGV[i + 1])
    i = i + 2
  elseif op == 'E' then
    local key = p .. 't:' .. ARGV[i + 1]
    if ARGV[i + 2] == '0' then
      redis.call('PERSIST', key)
    else
      redis.call('PEXPIREAT', key, ARGV[i + 2])
    end
    i = i + 3
  elseif op == 'X' then
    local index = p .. 'snap:' .. ARGV[i + 1]
    for _, name in ipairs(redis.call('HKEYS', index)) do
      redis.call('DEL', index .. ':t:' .. name)
    end
    redis.call('DEL', index)
    redis.call('SREM', KEYS[4], ARGV[i + 1])
    i = i + 2
  else
    return redis.error_reply('ERR memwork commit: unknown operation ' .. tostring(op))
  end
end
redis.call('HSET', KEYS[2], 'format', 'memwork-store', 'generation', ARGV[5],
  'schema_version', ARGV[6], 'txid', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[5])
if ARGV[7] == '1' then
  redis.set_repl(redis.REPL_NONE)
  redis.call('DEL', KEYS[1])
end
return 1
"""


class Script:
    """A Lua script called by SHA1, sent whole the first time a server lacks it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = _sha1(source.encode("utf-8")).hexdigest()

    def command(self, keys: list[Arg], args: list[Arg]) -> tuple[Arg, ...]:
        """The EVALSHA command (for pipelines)."""
        return ("EVALSHA", self.sha, len(keys), *keys, *args)

    def __call__(self, conn: Connection, keys: list[Arg], args: list[Arg]) -> Any:
        try:
            return conn.call(*self.command(keys, args))
        except ReplyError as exc:
            if exc.code != "NOSCRIPT":
                raise
        return conn.call("EVAL", self.source, len(keys), *keys, *args)


acquire = Script(ACQUIRE)
release = Script(RELEASE)
renew = Script(RENEW)
commit = Script(COMMIT)
