-- inspect: KEYS[1] = record; ARGV = offset.
-- Returns {now, type, fields}: the key's Redis type ('none' when absent) and, for a hash, every
-- field and value as stored (HGETALL), readable or not, so that an operator sees what is there.
local t = redis.call('TYPE', KEYS[1])['ok']
local fields = {}
if t == 'hash' then
  fields = redis.call('HGETALL', KEYS[1])
end
return {now_ms(), t, fields}
