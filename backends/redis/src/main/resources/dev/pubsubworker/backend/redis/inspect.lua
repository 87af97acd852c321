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
  local expiry = redis.call('PEXPIRETIME', key)
  local r = decode(value, expiry)
  if r then
    fields = {'state', r[1], 'fence', r[2], 'leaseExpiry', int(r[3]), 'expiresAt', int(r[4])}
    if r[5] then
      fields[#fields + 1] = 'claimToken'
      fields[#fields + 1] = r[5]
    end
    if r[6] then
      fields[#fields + 1] = 'fingerprint'
      fields[#fields + 1] = r[6]
    end
  else
    fields = {'value', value, 'expiry', int(expiry)}
  end
end
return {now_ms(), t, fields}
