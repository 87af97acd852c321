-- inspect: KEYS[1] = record; ARGV = offset.
-- Returns {now, type, fields}: the key's Redis type ('none' when absent) and its fields: for a
-- hash (a record of an earlier version) every field and value as stored (HGETALL), readable or
-- not; for a string record the fields it stands for (state, fence, leaseExpiry, expiresAt,
-- claimToken, fingerprint), or, if it is not one this backend writes, {'value', the value as
-- stored, 'expiry', its PEXPIRETIME}, so that an operator sees what is there.
local key = KEYS[1]
local t = redis.call('TYPE', key)['ok']
local fields = {}
if t == 'hash' then
  fields = redis.call('HGETALL', key)
elseif t == 'string' then
  local value = redis.call('GET', key)
  local state, fence, lease, expiresAt, token, rest = read_from(key, value)
  if state then
    fields = {'state', state, 'fence', fence, 'leaseExpiry', int(lease), 'expiresAt',
      int(expiresAt)}
    if token ~= '' then
      fields[#fields + 1] = 'claimToken'
      fields[#fields + 1] = token
    end
    if rest ~= '' then
      fields[#fields + 1] = 'fingerprint'
      fields[#fields + 1] = string.sub(rest, 2)
    end
  else
    fields = {'value', value, 'expiry', int(redis.call('PEXPIRETIME', key))}
  end
end
return {now_ms(), t, fields}
