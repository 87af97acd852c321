package dev.pubsubworker.embedded;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.FieldMask;
import com.google.protobuf.Message;
import java.util.Set;

/**
 * Applies an update mask to a resource, as Pub/Sub's Update RPCs do: each path names a field of the
 * resource, or with dots a field inside one of its message fields ({@code
 * dead_letter_policy.max_delivery_attempts}, {@code retry_policy.minimum_backoff}). The named field
 * takes the value it has in the update; unset there, it is cleared.
 */
final class FieldMasks {

  private FieldMasks() {}

  /**
   * {@code current} with the fields {@code mask} names taken from {@code update}.
   *
   * @param request the request's name for the errors ("UpdateSubscriptionRequest")
   * @param immutable top-level fields that may not be named
   * @throws io.grpc.StatusRuntimeException INVALID_ARGUMENT for an empty mask, a path that names no
   *     field ("... is not a known Subscription field", the emulator's words), or an immutable one
   */
  @SuppressWarnings("unchecked")
  static <M extends Message> M apply(
      M current, M update, FieldMask mask, String request, Set<String> immutable) {
    if (mask.getPathsCount() == 0) {
      throw Validation.invalid("update_mask must name at least one field to update");
    }
    Message.Builder merged = current.toBuilder();
    String resource = current.getDescriptorForType().getName();
    for (String path : mask.getPathsList()) {
      String[] segments = path.split("\\.", -1);
      if (immutable.contains(segments[0])) {
        throw Validation.invalid(
            "Invalid update_mask provided in the "
                + request
                + ": the '"
                + segments[0]
                + "' field cannot be updated");
      }
      Message from = update;
      Message.Builder to = merged;
      for (int i = 0; i < segments.length; i++) {
        FieldDescriptor field = to.getDescriptorForType().findFieldByName(segments[i]);
        boolean last = i == segments.length - 1;
        if (field == null
            || (!last
                && (field.getJavaType() != FieldDescriptor.JavaType.MESSAGE
                    || field.isRepeated()))) {
          throw Validation.invalid(
              "Invalid update_mask provided in the "
                  + request
                  + ": "
                  + path
                  + " is not a known "
                  + resource
                  + " field. Note that field paths must be of the form 'push_config' rather than"
                  + " 'pushConfig'.");
        }
        if (last) {
          copyField(from, to, field);
        } else {
          from = (Message) from.getField(field);
          to = to.getFieldBuilder(field);
        }
      }
    }
    return (M) merged.build();
  }

  private static void copyField(Message from, Message.Builder to, FieldDescriptor field) {
    if (field.isRepeated()) {
      to.clearField(field);
      for (int i = 0; i < from.getRepeatedFieldCount(field); i++) {
        to.addRepeatedField(field, from.getRepeatedField(field, i));
      }
    } else if (field.hasPresence() && !from.hasField(field)) {
      to.clearField(field);
    } else {
      to.setField(field, from.getField(field));
    }
  }
}
