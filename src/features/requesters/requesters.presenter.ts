import type { RequesterRow } from "./requesters.repository.js";

/** The API Requester object (spec: Requester). */
export interface RequesterView {
  id: number;
  first_name: string;
  last_name: string;
  email: string;
  mobile: string | null;
  company: string | null;
  role: string | null;
  location: string | null;
  facebook: string | null;
  linkedin: string | null;
  twitter: string | null;
  skype: string | null;
  /** `data:image/<png|jpeg|webp>;base64,...`, or null when unset. */
  avatar: string | null;
  created: string;
  updated: string;
}

/** Allow-lists a requester row into the API object. */
export function presentRequester(row: RequesterRow): RequesterView {
  return {
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    mobile: row.mobile,
    company: row.company,
    role: row.role,
    location: row.location,
    facebook: row.facebook,
    linkedin: row.linkedin,
    twitter: row.twitter,
    skype: row.skype,
    avatar: row.avatar,
    created: row.created,
    updated: row.updated,
  };
}
