import { isKvConflict, type JsonKv } from "../../infra/nats/json-kv.js";
import { AppError } from "../errors.js";
import { isIdToken } from "../ids.js";
import { digest } from "./hash.js";

/** (system, value) is an identifier's identity; integration_id is what it is linked to, when anything. */
export interface ExternalIdentifier {
  system: string;
  value: string;
  integration_id?: string;
}

export interface Patient {
  id: string;
  organization_id: string;
  project_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone_number: string | null;
  date_of_birth: string | null;
  sex: string | null;
  /** Free text; absent on records written before the field existed (read as null). */
  primary_disease_site?: string | null;
  disease_stage?: string | null;
  /** IANA zone; daily rollups of device data use it. */
  timezone: string;
  status: "active" | "deleted";
  external_identifiers: ExternalIdentifier[];
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

interface Claim {
  patient_id: string;
  claimed_at: string;
}

/** Patients kept in memory per process (about 1 KB each). */
const PATIENT_CACHE_MAX = 200_000;

/** A claim older than this whose patient never appeared was left by a crash: take it over. */
const ORPHAN_CLAIM_MS = 30_000;

/**
 * Patients of a project, and the external-identifier index. Uniqueness of an identifier
 * within a project is a KV create() on its digest, so two concurrent creations of the
 * same identifier give one patient and one 409, across any number of instances.
 */
export class PatientStore {
  private readonly cache = new Map<string, Patient>();

  constructor(
    private readonly patients: JsonKv<Patient>,
    private readonly claims: JsonKv<Claim>,
  ) {}

  static key(project: string, id: string): string {
    return `${project}.${id}`;
  }

  private claimKey(project: string, e: ExternalIdentifier): string {
    return `${project}.${digest(e.system, e.value)}`;
  }

  /**
   * Follows a write seen on the bucket (from any instance): a cached patient takes the
   * new value, so our own creates stay cached and others' edits are seen at once.
   */
  refresh(kvKey: string, value: Patient | null): void {
    if (value === null) this.cache.delete(kvKey);
    else if (this.cache.has(kvKey)) this.cache.set(kvKey, value);
  }

  private remember(kvKey: string, p: Patient): void {
    // Bounded: past the cap the oldest tenth goes (Map keeps insertion order).
    if (this.cache.size >= PATIENT_CACHE_MAX) {
      let drop = PATIENT_CACHE_MAX / 10;
      for (const k of this.cache.keys()) {
        this.cache.delete(k);
        if (--drop <= 0) break;
      }
    }
    this.cache.set(kvKey, p);
  }

  async get(project: string, id: string): Promise<Patient | null> {
    if (!isIdToken(id)) return null;
    const k = PatientStore.key(project, id);
    const cached = this.cache.get(k);
    if (cached) return cached;
    const p = (await this.patients.get(k))?.value ?? null;
    if (p) this.remember(k, p);
    return p;
  }

  /** The stored record, read past the cache and without filling it (scans of a whole project). */
  async peek(project: string, id: string): Promise<Patient | null> {
    if (!isIdToken(id)) return null;
    return this.cache.get(PatientStore.key(project, id)) ?? (await this.patients.get(PatientStore.key(project, id)))?.value ?? null;
  }

  /** The cached patient, without a round trip; undefined when not cached (ask getActive). */
  cachedActive(project: string, id: string): Patient | null | undefined {
    const p = this.cache.get(PatientStore.key(project, id));
    return p === undefined ? undefined : p.status === "active" ? p : null;
  }

  async getActive(project: string, id: string): Promise<Patient | null> {
    const p = await this.get(project, id);
    return p && p.status === "active" ? p : null;
  }

  async findByExternalId(project: string, e: ExternalIdentifier): Promise<Patient | null> {
    const c = await this.claims.get(this.claimKey(project, e));
    return c ? this.getActive(project, c.value.patient_id) : null;
  }

  /**
   * Claims each identifier for `patientId`. On conflict, claims made here are released
   * and a 409 names the identifier. Claims already held by this patient are kept.
   */
  async claimIdentifiers(project: string, patientId: string, ids: ExternalIdentifier[], now: string): Promise<void> {
    const made: ExternalIdentifier[] = [];
    for (const e of ids) {
      const key = this.claimKey(project, e);
      try {
        await this.claims.create(key, { patient_id: patientId, claimed_at: now });
        made.push(e);
      } catch (err) {
        if (!isKvConflict(err)) throw err;
        if (await this.takeOverOrphan(project, key, patientId, now)) {
          made.push(e);
          continue;
        }
        await this.releaseIdentifiers(project, made, patientId);
        throw new AppError("conflict", `external identifier ${e.system}|${e.value} already belongs to another patient`, [
          { type: "conflict", message: "external identifier already in use", field: "external_identifiers", input_value: e },
        ]);
      }
    }
  }

  private async takeOverOrphan(project: string, key: string, patientId: string, now: string): Promise<boolean> {
    const cur = await this.claims.get(key);
    if (!cur) return false;
    if (cur.value.patient_id === patientId) return true;
    const holder = await this.get(project, cur.value.patient_id);
    // Free when its holder never appeared (a crash mid-create) or has been deleted.
    const orphan = !holder && Date.now() - Date.parse(cur.value.claimed_at) > ORPHAN_CLAIM_MS;
    if (!orphan && holder?.status !== "deleted") return false;
    try {
      await this.claims.update(key, { patient_id: patientId, claimed_at: now }, cur.revision);
      return true;
    } catch (err) {
      if (isKvConflict(err)) return false;
      throw err;
    }
  }

  /**
   * Frees identifiers `patientId` holds. A claim another patient holds by now (it took the
   * identifier over meanwhile) is left alone: compare-and-delete at the revision read.
   */
  async releaseIdentifiers(project: string, ids: ExternalIdentifier[], patientId: string): Promise<void> {
    for (const e of ids) {
      const key = this.claimKey(project, e);
      const cur = await this.claims.get(key);
      if (!cur || cur.value.patient_id !== patientId) continue;
      await this.claims.delete(key, cur.revision).catch((err) => {
        if (!isKvConflict(err)) throw err;
      });
    }
  }

  async create(p: Patient): Promise<void> {
    await this.claimIdentifiers(p.project_id, p.id, p.external_identifiers, p.created_at);
    try {
      await this.patients.create(PatientStore.key(p.project_id, p.id), p);
    } catch (err) {
      await this.releaseIdentifiers(p.project_id, p.external_identifiers, p.id);
      throw err;
    }
    this.remember(PatientStore.key(p.project_id, p.id), p);
  }

  /** Read-modify-write with CAS; returns null when the patient does not exist. */
  async modify(project: string, id: string, change: (p: Patient) => Patient | undefined): Promise<Patient | null> {
    const k = PatientStore.key(project, id);
    const r = await this.patients.modify(k, change);
    if (r) this.remember(k, r.value);
    else this.cache.delete(k);
    return r?.value ?? null;
  }

  /**
   * Add-only merge of identifiers into an active patient: pairs it has stay as stored
   * (their integration_id too), new ones are claimed (409 when another patient holds one)
   * and appended. `also` makes the other changes of the same request in the same write.
   * Null when the patient is not active; the claims made here are then let go.
   */
  async addIdentifiers(
    project: string,
    id: string,
    wanted: ExternalIdentifier[],
    now: string,
    also: (p: Patient) => Patient = (p) => p,
  ): Promise<{ patient: Patient; added: ExternalIdentifier[]; skipped: ExternalIdentifier[] } | null> {
    const before = await this.getActive(project, id);
    if (!before) return null;
    const has = (list: ExternalIdentifier[], e: ExternalIdentifier) => list.some((x) => x.system === e.system && x.value === e.value);
    const fresh = wanted.filter((e) => !has(before.external_identifiers, e));
    await this.claimIdentifiers(project, id, fresh, now);
    let added: ExternalIdentifier[] = [];
    let updated: Patient | null;
    try {
      updated = await this.modify(project, id, (cur) => {
        if (cur.status !== "active") return undefined;
        // Only claimed pairs are appended: one present at the read and removed since has no claim here.
        added = fresh.filter((e) => !has(cur.external_identifiers, e));
        return also({ ...cur, external_identifiers: [...cur.external_identifiers, ...added], updated_at: now });
      });
    } catch (err) {
      await this.releaseIdentifiers(project, fresh, id);
      throw err;
    }
    if (!updated || updated.status !== "active") {
      await this.releaseIdentifiers(project, fresh, id);
      return null;
    }
    return { patient: updated, added, skipped: wanted.filter((e) => !has(added, e)) };
  }

  async list(project: string): Promise<string[]> {
    return (await this.patients.keys(`${project}.*`)).map((k) => k.slice(project.length + 1));
  }

  async erase(project: string, id: string): Promise<void> {
    const k = PatientStore.key(project, id);
    const p = await this.get(project, id);
    // Only claims still this patient's: a soft delete released them already, and since then they may be another patient's.
    if (p) await this.releaseIdentifiers(project, p.external_identifiers, p.id);
    await this.patients.delete(k);
    this.cache.delete(k);
  }

  /** Erases every patient record and identifier claim of a deleted project (their state and logs go elsewhere first). */
  async eraseProject(project: string): Promise<void> {
    await this.patients.purgeMatching(`${project}.*`);
    await this.claims.purgeMatching(`${project}.*`);
    for (const k of this.cache.keys()) if (k.startsWith(`${project}.`)) this.cache.delete(k);
  }
}
