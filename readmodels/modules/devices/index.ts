import type { LogType } from "../../../catalog/log-types.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { firstStr, normName } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

/** key: device_id (or serial number, UDI), else `<normalized type>|<normalized name or model>`. */
export interface Device extends OpenEntry {
  device_id: string | null;
  device_type: string | null;
  name: string | null;
  manufacturer: string | null;
  model: string | null;
  /** active | inactive; a device sent with entered_in_error (or action remove) is not listed. */
  status: string | null;
}

/** The patient's devices (wearables, implants, home equipment). */
export interface DevicesDoc {
  devices: Device[];
}

const ID = ["device_id", "serial_number", "udi", "identifier"];
const TYPE = ["device_type", "type", "category"];
const NAME = ["name", "device_name", "display"];

export const handles: readonly LogType[] = ["device"];

export const devices: ReadModel<"devices", DevicesDoc> = {
  key: "devices",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ devices: [] }),
  evolve: (s, log) => {
    let list: readonly Device[] = s.doc.devices;
    let clocks = s.clocks;
    for (const item of itemsOf(log.payload, ["devices"])) {
      const device_id = firstStr(item, ID) ?? null;
      const device_type = firstStr(item, TYPE) ?? null;
      const name = firstStr(item, NAME) ?? null;
      const model = firstStr(item, ["model"]) ?? null;
      if (!device_id && !device_type && !name && !model) continue;
      const key = device_id ?? `${normName(device_type ?? "")}|${normName(name ?? model ?? "")}`;
      ({ list, clocks } = applyOpen<Device>({
        list, clocks, ns: "devices", key, item, log, consumed: [...ID, ...TYPE, ...NAME, "model", "manufacturer", "status"],
        fields: { device_id, device_type, name, manufacturer: firstStr(item, ["manufacturer"]) ?? null, model, status: firstStr(item, ["status"]) ?? null },
      }));
    }
    return withDoc(s, list === s.doc.devices ? s.doc : { devices: [...list] }, clocks);
  },
};
